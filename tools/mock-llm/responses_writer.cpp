#include "tools/mock-llm/responses_writer.hpp"

#include "tools/mock-llm/dialects.hpp"
#include "tools/mock-llm/text_util.hpp"

#include <map>
#include <memory>

namespace mockllm {
namespace {

// Walks the Script once, turning chat-shaped events into output items: consecutive reasoning
// or content events fill one item, each tool call is its own item. The same walk yields the
// final response object for the non-streaming answer.
class ResponsesRenderer final : public FrameRenderer {
public:
  ResponsesRenderer(const Script &script, const ResponseContext &ctx) : ctx_(ctx) {
    for (const Event &e : script.events)
      if (e.kind == EventKind::ToolArgs) fragments_[e.index].push_back(e.text);
  }

  void render(const Event &e, Frames &out) override {
    if (e.kind == EventKind::NoChoices) return; // nothing like it on this wire
    ensure_created(out);
    switch (e.kind) {
    case EventKind::Content:
      if (open_ != Open::Message) open_item(Open::Message, out);
      if (!e.text.empty()) ++content_deltas_;
      append_open_text(e);
      out.push_back(frame("response.output_text.delta",
                          item_ref() + R"(,"content_index":0,"delta":)" + text_json(e) +
                              R"(,"logprobs":[])"));
      break;
    case EventKind::Reasoning:
      if (open_ != Open::Reasoning) open_item(Open::Reasoning, out);
      append_open_text(e);
      out.push_back(frame("response.reasoning_summary_text.delta",
                          item_ref() + R"(,"summary_index":0,"delta":)" + text_json(e)));
      break;
    case EventKind::ToolStart: emit_tool_call(e, out); break;
    case EventKind::Finish: render_finish(e.text, out); break;
    case EventKind::StreamError:
      if (e.response_failed) {
        final_ = response_json("failed", R"({"code":)" + json_string(e.code) +
                                             R"(,"message":)" + json_string(e.message) + "}");
        out.push_back(frame("response.failed", R"(,"response":)" + final_));
      } else {
        out.push_back(frame("error", R"(,"code":)" + json_string(e.code) + R"(,"message":)" +
                                         json_string(e.message) + R"(,"param":null)"));
      }
      break;
    default: break; // Role only triggers response.created; ToolArgs went out with the start
    }
  }

  void finish(Frames &) override {}

  // The response object after all events: the terminal one, or a completed one for a script
  // that never finished (the stream then simply ends).
  std::string final_response() {
    if (final_.empty()) {
      Frames ignored;
      close_open(ignored);
      final_ = response_json("completed");
    }
    return final_;
  }

private:
  enum class Open { None, Reasoning, Message };

  std::string frame(std::string_view type, const std::string &members) {
    std::string data = R"({"type":)" + json_string(type) +
                       R"(,"sequence_number":)" + std::to_string(seq_++) + members + "}";
    return "event: " + std::string(type) + "\ndata: " + data + "\n\n";
  }

  // `error` and `incomplete` are JSON; the output and usage appear once the response ends.
  std::string response_json(std::string_view status, const std::string &error = "null",
                            const std::string &incomplete = "null") const {
    const bool ended = status != "in_progress";
    std::string out = R"({"id":)" + json_string(ctx_.id) +
                      R"(,"object":"response","created_at":)" + std::to_string(ctx_.created) +
                      R"(,"status":)" + json_string(status) + R"(,"error":)" + error +
                      R"(,"incomplete_details":)" + incomplete + R"(,"model":)" +
                      json_string(ctx_.model) + R"(,"output":[)";
    if (ended)
      for (size_t i = 0; i < done_items_.size(); ++i) out += (i ? "," : "") + done_items_[i];
    out += R"(],"usage":)";
    if (!ended) return out + "null}";
    const size_t p = ctx_.prompt_tokens, o = content_deltas_;
    return out + R"({"input_tokens":)" + std::to_string(p) +
           R"(,"input_tokens_details":{"cached_tokens":0},"output_tokens":)" + std::to_string(o) +
           R"(,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":)" +
           std::to_string(p + o) + "}}";
  }

  void ensure_created(Frames &out) {
    if (created_) return;
    created_ = true;
    const std::string r = R"(,"response":)" + response_json("in_progress");
    out.push_back(frame("response.created", r));
    out.push_back(frame("response.in_progress", r));
  }

  std::string next_item_id(std::string_view prefix) const {
    return std::string(prefix) + std::to_string(ctx_.serial) + "_" +
           std::to_string(done_items_.size());
  }

  // "item_id" and "output_index" of the open item (members with a leading comma).
  std::string item_ref() const {
    return R"(,"item_id":)" + json_string(open_id_) +
           R"(,"output_index":)" + std::to_string(done_items_.size());
  }

  std::string text_json(const Event &e) const {
    std::string s;
    append_event_text(s, e);
    return s;
  }

  std::string open_text_json() const {
    std::string s;
    if (open_raw_)
      append_json_string_unchecked(s, open_text_);
    else
      append_json_string(s, open_text_);
    return s;
  }

  void append_open_text(const Event &e) {
    open_text_ += e.text;
    open_raw_ = open_raw_ || e.raw_utf8;
  }

  void open_item(Open kind, Frames &out) {
    close_open(out);
    open_ = kind;
    open_text_.clear();
    open_raw_ = false;
    const std::string index = R"(,"output_index":)" + std::to_string(done_items_.size());
    if (kind == Open::Message) {
      open_id_ = next_item_id("msg_");
      out.push_back(frame("response.output_item.added",
                          index + R"(,"item":{"id":)" + json_string(open_id_) +
                              R"(,"type":"message","status":"in_progress","role":"assistant",)"
                              R"("content":[]})"));
      out.push_back(frame("response.content_part.added",
                          item_ref() + R"(,"content_index":0,"part":{"type":"output_text",)"
                                       R"("text":"","annotations":[]})"));
    } else {
      open_id_ = next_item_id("rs_");
      out.push_back(frame("response.output_item.added",
                          index + R"(,"item":{"id":)" + json_string(open_id_) +
                              R"(,"type":"reasoning","summary":[]})"));
      out.push_back(frame("response.reasoning_summary_part.added",
                          item_ref() + R"(,"summary_index":0,"part":{"type":"summary_text",)"
                                       R"("text":""})"));
    }
  }

  void close_open(Frames &out) {
    if (open_ == Open::None) return;
    const std::string text = open_text_json();
    std::string item;
    if (open_ == Open::Message) {
      out.push_back(frame("response.output_text.done",
                          item_ref() + R"(,"content_index":0,"text":)" + text +
                              R"(,"logprobs":[])"));
      const std::string part = R"({"type":"output_text","text":)" + text + R"(,"annotations":[]})";
      out.push_back(frame("response.content_part.done",
                          item_ref() + R"(,"content_index":0,"part":)" + part));
      item = R"({"id":)" + json_string(open_id_) +
             R"(,"type":"message","status":"completed","role":"assistant","content":[)" + part +
             "]}";
    } else {
      out.push_back(frame("response.reasoning_summary_text.done",
                          item_ref() + R"(,"summary_index":0,"text":)" + text));
      const std::string part = R"({"type":"summary_text","text":)" + text + "}";
      out.push_back(frame("response.reasoning_summary_part.done",
                          item_ref() + R"(,"summary_index":0,"part":)" + part));
      // Opaque to clients; they only send it back with the next request.
      item = R"({"id":)" + json_string(open_id_) + R"(,"type":"reasoning","summary":[)" + part +
             R"(],"encrypted_content":)" +
             json_string("gAAAAmock" + mock_token(ctx_.id + "/" + open_id_, 64, kBase64)) + "}";
    }
    out.push_back(frame("response.output_item.done",
                        R"(,"output_index":)" + std::to_string(done_items_.size()) +
                            R"(,"item":)" + item));
    done_items_.push_back(std::move(item));
    open_ = Open::None;
  }

  // A whole function_call item at once: items do not interleave on this wire, while the chat
  // scripts may interleave the fragments of parallel calls.
  void emit_tool_call(const Event &start, Frames &out) {
    close_open(out);
    const std::string id = next_item_id("fc_");
    const std::string index = std::to_string(done_items_.size());
    const std::string ref = R"(,"item_id":)" + json_string(id) + R"(,"output_index":)" + index;
    auto item = [&](std::string_view status, const std::string &arguments) {
      return R"({"id":)" + json_string(id) + R"(,"type":"function_call","status":)" +
             json_string(status) + R"(,"name":)" + json_string(start.name) + R"(,"call_id":)" +
             json_string(start.id) + R"(,"arguments":)" + json_string(arguments) + "}";
    };
    out.push_back(frame("response.output_item.added",
                        R"(,"output_index":)" + index + R"(,"item":)" + item("in_progress", "")));
    std::string all;
    for (const std::string &part : fragments_[start.index]) {
      all += part;
      out.push_back(frame("response.function_call_arguments.delta",
                          ref + R"(,"delta":)" + json_string(part)));
    }
    out.push_back(frame("response.function_call_arguments.done",
                        ref + R"(,"arguments":)" + json_string(all)));
    std::string done = item("completed", all);
    out.push_back(frame("response.output_item.done",
                        R"(,"output_index":)" + index + R"(,"item":)" + done));
    done_items_.push_back(std::move(done));
  }

  // Chat's finish reasons map onto the response status: length and content_filter leave it
  // incomplete, with the reason the Responses API gives.
  void render_finish(const std::string &reason, Frames &out) {
    close_open(out);
    if (reason == "length" || reason == "content_filter") {
      const std::string why = reason == "length" ? "max_output_tokens" : "content_filter";
      final_ = response_json("incomplete", "null", R"({"reason":)" + json_string(why) + "}");
      out.push_back(frame("response.incomplete", R"(,"response":)" + final_));
    } else {
      final_ = response_json("completed");
      out.push_back(frame("response.completed", R"(,"response":)" + final_));
    }
  }

  ResponseContext ctx_;
  long long seq_ = 0;
  bool created_ = false;
  Open open_ = Open::None;
  std::string open_id_, open_text_;
  bool open_raw_ = false;
  std::vector<std::string> done_items_;
  std::map<int, std::vector<std::string>> fragments_;
  size_t content_deltas_ = 0;
  std::string final_;
};

} // namespace

void write_responses_answer(const Script &script, const ResponseContext &ctx, bool stream,
                            httplib::Response &res) {
  auto renderer = std::make_shared<ResponsesRenderer>(script, ctx);
  if (stream) {
    write_stream(std::make_shared<const Script>(script), renderer, ctx.global_delay_ms, res);
    return;
  }
  write_json_answer(script, ctx.global_delay_ms, [&] {
    Frames ignored;
    for (const Event &e : script.events) {
      switch (e.kind) {
      case EventKind::Sleep:
      case EventKind::Cut:
      case EventKind::Hang:
      case EventKind::End:
      case EventKind::Raw: break;
      default: renderer->render(e, ignored);
      }
    }
    return renderer->final_response();
  }, res);
}

} // namespace mockllm
