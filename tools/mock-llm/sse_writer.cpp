#include "tools/mock-llm/sse_writer.hpp"

#include "tools/mock-llm/dialects.hpp"
#include "tools/mock-llm/text_util.hpp"

#include <map>
#include <memory>

namespace mockllm {
namespace {

// Common head of every chunk, up to and including `"choices":[`.
std::string chunk_head(const ResponseContext &ctx) {
  std::string out = R"({"id":)";
  append_json_string(out, ctx.id);
  out += R"(,"object":"chat.completion.chunk","created":)";
  out += std::to_string(ctx.created);
  out += R"(,"model":)";
  append_json_string(out, ctx.model);
  out += R"(,"choices":[)";
  return out;
}

std::string delta_json(const Event &e) {
  std::string d;
  switch (e.kind) {
  case EventKind::Role: return R"({"role":"assistant"})";
  case EventKind::Content:
    d = R"({"content":)";
    append_event_text(d, e);
    return d + "}";
  case EventKind::Reasoning:
    d = R"({"reasoning_content":)";
    append_json_string(d, e.text);
    return d + "}";
  case EventKind::ToolStart:
    d = R"({"tool_calls":[{"index":)" + std::to_string(e.index) + R"(,"id":)";
    append_json_string(d, e.id);
    d += R"(,"type":"function","function":{"name":)";
    append_json_string(d, e.name);
    return d + R"(,"arguments":""}}]})";
  case EventKind::ToolArgs:
    d = R"({"tool_calls":[{"index":)" + std::to_string(e.index) + R"(,"function":{"arguments":)";
    append_json_string(d, e.text);
    return d + "}}]}";
  default: return "{}";
  }
}

std::string sse_data(const std::string &json) { return "data: " + json + "\n\n"; }

// The original mock stream: the usage chunk follows the finish chunk when asked for.
class LegacyRenderer final : public FrameRenderer {
public:
  explicit LegacyRenderer(const ResponseContext &ctx) : ctx_(ctx) {}

  void render(const Event &e, Frames &out) override {
    if (e.kind == EventKind::StreamError) {
      out.push_back(sse_data(e.text));
      return;
    }
    if (e.kind == EventKind::Content && !e.text.empty()) ++content_deltas_;
    out.push_back(sse_data(render_chunk(ctx_, e)));
    if (e.kind == EventKind::Finish && ctx_.include_usage)
      out.push_back(sse_data(chunk_head(ctx_) + "],\"usage\":" +
                             usage_json(ctx_.prompt_tokens, content_deltas_) + "}"));
  }
  void finish(Frames &out) override { out.push_back("data: [DONE]\n\n"); }

private:
  ResponseContext ctx_;
  size_t content_deltas_ = 0;
};

struct ToolCall {
  std::string id, name, arguments;
};

// Folds the stream into the message a non-streaming client would receive.
std::string completion_json(const Script &script, const ResponseContext &ctx) {
  std::string content, reasoning, finish = "stop";
  bool raw_content = false;
  std::map<int, ToolCall> calls;
  for (const Event &e : script.events) {
    switch (e.kind) {
    case EventKind::Content:
      content += e.text;
      raw_content = raw_content || e.raw_utf8;
      break;
    case EventKind::Reasoning: reasoning += e.text; break;
    case EventKind::ToolStart:
      calls[e.index].id = e.id;
      calls[e.index].name = e.name;
      break;
    case EventKind::ToolArgs: calls[e.index].arguments += e.text; break;
    case EventKind::Finish: finish = e.text; break;
    default: break;
    }
  }
  std::string out = R"({"id":)";
  append_json_string(out, ctx.id);
  out += R"(,"object":"chat.completion","created":)" + std::to_string(ctx.created);
  out += R"(,"model":)";
  append_json_string(out, ctx.model);
  out += R"(,"choices":[{"index":0,"message":{"role":"assistant","content":)";
  if (content.empty() && !calls.empty())
    out += "null";
  else if (raw_content)
    append_json_string_unchecked(out, content);
  else
    append_json_string(out, content);
  if (!reasoning.empty()) {
    out += R"(,"reasoning_content":)";
    append_json_string(out, reasoning);
  }
  if (!calls.empty()) {
    out += R"(,"tool_calls":[)";
    bool first = true;
    for (const auto &[index, call] : calls) {
      if (!first) out += ',';
      first = false;
      out += R"({"id":)";
      append_json_string(out, call.id);
      out += R"(,"type":"function","function":{"name":)";
      append_json_string(out, call.name);
      out += R"(,"arguments":)";
      append_json_string(out, call.arguments);
      out += "}}";
    }
    out += ']';
  }
  out += R"(},"finish_reason":)";
  append_json_string(out, finish);
  out += R"(}],"usage":)" + usage_json(ctx.prompt_tokens, script.content_deltas()) + "}";
  return out;
}

} // namespace

std::string usage_json(size_t prompt_tokens, size_t completion_tokens) {
  return R"({"prompt_tokens":)" + std::to_string(prompt_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + R"(,"total_tokens":)" +
         std::to_string(prompt_tokens + completion_tokens) + "}";
}

std::string render_chunk(const ResponseContext &ctx, const Event &e) {
  switch (e.kind) {
  case EventKind::Raw:
  case EventKind::Sleep:
  case EventKind::Cut:
  case EventKind::Hang:
  case EventKind::StreamError:
  case EventKind::End: return {};
  case EventKind::NoChoices: return chunk_head(ctx) + "]}";
  case EventKind::Finish: {
    std::string out = chunk_head(ctx) + R"({"index":0,"delta":{},"finish_reason":)";
    append_json_string(out, e.text);
    return out + "}]}";
  }
  default:
    return chunk_head(ctx) + R"({"index":0,"delta":)" + delta_json(e) +
           R"(,"finish_reason":null}]})";
  }
}

void write_response(const Script &script, const ResponseContext &ctx, bool stream,
                    httplib::Response &res) {
  const bool legacy = ctx.dialect == Dialect::Default;
  if (stream) {
    std::shared_ptr<FrameRenderer> renderer;
    if (legacy)
      renderer = std::make_shared<LegacyRenderer>(ctx);
    else
      renderer = make_dialect_renderer(script, ctx);
    write_stream(std::make_shared<const Script>(script), std::move(renderer), ctx.global_delay_ms,
                 res);
    return;
  }
  write_json_answer(script, ctx.global_delay_ms, [&] {
    return legacy ? completion_json(script, ctx) : dialect_completion_json(script, ctx);
  }, res);
}

} // namespace mockllm
