#include "tools/mock-llm/sse_writer.hpp"

#include "tools/mock-llm/text_util.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

namespace mockllm {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHangLimit = std::chrono::minutes(10);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

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
    append_json_string(d, e.text);
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

// Sleeps up to `ms`, waking every 100 ms to notice a client that went away (false then).
bool wait_while_connected(httplib::DataSink &sink, Clock::duration total) {
  const auto deadline = Clock::now() + total;
  for (;;) {
    if (!sink.is_writable()) return false;
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(left, kPollInterval));
  }
}

bool send_event(httplib::DataSink &sink, const std::string &payload) {
  return sink.write(payload.data(), payload.size());
}

std::string sse_data(const std::string &json) { return "data: " + json + "\n\n"; }

// Writes the whole script; false means "drop the connection" (client gone, cut, hang).
bool stream_script(const Script &script, const ResponseContext &ctx, httplib::DataSink &sink) {
  const auto global_delay = std::chrono::milliseconds(ctx.global_delay_ms);
  bool first = true;
  size_t content_deltas = 0;
  auto emit = [&](const std::string &payload) {
    if (!first && ctx.global_delay_ms > 0 && !wait_while_connected(sink, global_delay))
      return false;
    first = false;
    return send_event(sink, payload);
  };

  for (const Event &e : script.events) {
    switch (e.kind) {
    case EventKind::Sleep:
      if (!wait_while_connected(sink, std::chrono::milliseconds(e.ms))) return false;
      break;
    case EventKind::Cut: return false;
    case EventKind::Hang:
      wait_while_connected(sink, kHangLimit);
      return false;
    case EventKind::Raw:
      if (!emit(e.text)) return false;
      break;
    default: {
      if (e.kind == EventKind::Content && !e.text.empty()) ++content_deltas;
      if (!emit(sse_data(render_chunk(ctx, e)))) return false;
      if (e.kind == EventKind::Finish && ctx.include_usage) {
        std::string usage = chunk_head(ctx) + "],\"usage\":" +
                            usage_json(ctx.prompt_tokens, content_deltas) + "}";
        if (!emit(sse_data(usage))) return false;
      }
    }
    }
  }
  if (!emit("data: [DONE]\n\n")) return false;
  sink.done();
  return true;
}

struct ToolCall {
  std::string id, name, arguments;
};

// Folds the stream into the message a non-streaming client would receive.
std::string completion_json(const Script &script, const ResponseContext &ctx) {
  std::string content, reasoning, finish = "stop";
  std::map<int, ToolCall> calls;
  for (const Event &e : script.events) {
    switch (e.kind) {
    case EventKind::Content: content += e.text; break;
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

// Total time the streamed version would take, so slow scenarios stay slow without streaming.
std::chrono::milliseconds stream_duration(const Script &script, const ResponseContext &ctx) {
  long long ms = 0, written = 0;
  for (const Event &e : script.events) {
    if (e.kind == EventKind::Sleep)
      ms += e.ms;
    else if (e.kind != EventKind::Cut && e.kind != EventKind::Hang)
      ++written;
  }
  if (written > 0) ms += ctx.global_delay_ms * written; // one gap per event incl. [DONE]
  return std::chrono::milliseconds(ms);
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
  case EventKind::Hang: return {};
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
  res.status = 200;
  if (stream) {
    auto state = std::make_shared<const std::pair<Script, ResponseContext>>(script, ctx);
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    // Exactly "text/event-stream": httplib skips compression only for this content type.
    res.set_chunked_content_provider("text/event-stream",
                                     [state](size_t offset, httplib::DataSink &sink) {
                                       if (offset > 0) { // already fully written
                                         sink.done();
                                         return true;
                                       }
                                       return stream_script(state->first, state->second, sink);
                                     });
    return;
  }

  const bool truncated = !script.completes();
  if (!truncated) std::this_thread::sleep_for(stream_duration(script, ctx));
  if (script.non_stream_status != 200) {
    res.status = script.non_stream_status;
    res.set_content(script.non_stream_error_body, "application/json");
    return;
  }
  auto body = std::make_shared<const std::string>(completion_json(script, ctx));
  if (!truncated) {
    res.set_content(*body, "application/json");
    return;
  }
  // cut / hang without streaming: promise the full Content-Length, then deliver half of it
  // (cut) or nothing (hang) and drop the connection.
  const bool hang = std::any_of(script.events.begin(), script.events.end(),
                                [](const Event &e) { return e.kind == EventKind::Hang; });
  res.set_content_provider(body->size(), "application/json",
                           [body, hang](size_t offset, size_t, httplib::DataSink &sink) {
                             if (hang) {
                               wait_while_connected(sink, kHangLimit);
                               return false;
                             }
                             if (offset == 0) sink.write(body->data(), body->size() / 2);
                             return false;
                           });
}

} // namespace mockllm
