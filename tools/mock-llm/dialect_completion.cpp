// Non-streaming (stream:false) answers in the provider dialects: the Script folded into one
// chat.completion object whose message carries each provider's extra fields.
#include "tools/mock-llm/dialects.hpp"

#include "tools/mock-llm/text_util.hpp"

#include <map>

namespace mockllm {
namespace {

struct Folded {
  std::string content, reasoning, finish = "stop";
  bool raw_content = false;
  struct Call {
    Event start{EventKind::ToolStart};
    std::string arguments;
  };
  std::map<int, Call> calls;
};

Folded fold(const Script &script) {
  Folded f;
  for (const Event &e : script.events) {
    switch (e.kind) {
    case EventKind::Content:
      f.content += e.text;
      f.raw_content = f.raw_content || e.raw_utf8;
      break;
    case EventKind::Reasoning: f.reasoning += e.text; break;
    case EventKind::ToolStart: f.calls[e.index].start = e; break;
    case EventKind::ToolArgs: f.calls[e.index].arguments += e.text; break;
    case EventKind::Finish: f.finish = e.text; break;
    default: break;
    }
  }
  return f;
}

std::string message_json(const Folded &f, const ResponseContext &ctx) {
  const Dialect d = ctx.dialect;
  std::string m = R"({"role":"assistant","content":)";
  if (f.content.empty() && !f.calls.empty())
    m += "null";
  else if (f.raw_content)
    append_json_string_unchecked(m, f.content);
  else
    append_json_string(m, f.content);
  if (d == Dialect::OpenAI || d == Dialect::Azure) m += R"(,"refusal":null,"annotations":[])";
  // Reasoning is visible only where the provider returns it (Claude, DeepSeek).
  if (!f.reasoning.empty() && (d == Dialect::Anthropic || d == Dialect::DeepSeek)) {
    m += R"(,"reasoning_content":)" + json_string(f.reasoning);
    if (d == Dialect::Anthropic)
      m += R"(,"thinking_blocks":[{"type":"thinking","thinking":)" + json_string(f.reasoning) +
           R"(,"signature":)" + json_string(thinking_signature(ctx)) + "}]";
  }
  if (!f.calls.empty()) {
    m += R"(,"tool_calls":[)";
    bool first = true;
    for (const auto &[index, call] : f.calls) {
      if (!first) m += ',';
      first = false;
      m += '{';
      if (const std::string id = tool_call_id(ctx, call.start); !id.empty())
        m += R"("id":)" + json_string(id) + ',';
      m += R"("type":"function","function":{"name":)" + json_string(call.start.name) +
           R"(,"arguments":)" + json_string(call.arguments) + "}}";
    }
    m += ']';
  }
  return m + '}';
}

} // namespace

std::string dialect_completion_json(const Script &script, const ResponseContext &ctx) {
  const Dialect d = ctx.dialect;
  const Folded f = fold(script);
  const std::string message = message_json(f, ctx);
  const std::string finish = json_string(dialect_finish_reason(d, f.finish));
  const std::string usage = dialect_usage_json(d, ctx.prompt_tokens, script.content_deltas(),
                                               f.reasoning.size());
  const std::string id = json_string(ctx.id), model = json_string(ctx.model),
                    created = std::to_string(ctx.created);
  if (d == Dialect::Azure) // alphabetical keys, filter results for the prompt and the answer
    return R"({"choices":[{"content_filter_results":)" +
           azure_filter_results(f.finish == "content_filter") + R"(,"finish_reason":)" + finish +
           R"(,"index":0,"logprobs":null,"message":)" + message + R"(}],"created":)" + created +
           R"(,"id":)" + id + R"(,"model":)" + model +
           R"(,"object":"chat.completion","prompt_filter_results":[{"prompt_index":0,)"
           R"("content_filter_results":)" +
           azure_filter_results(false) + R"(}],"system_fingerprint":"fp_mock","usage":)" + usage +
           "}";
  std::string out = R"({"id":)" + id + R"(,"object":"chat.completion","created":)" + created +
                    R"(,"model":)" + model;
  if (d == Dialect::OpenAI) out += R"(,"system_fingerprint":"fp_mock")";
  if (d == Dialect::DeepSeek) out += R"(,"system_fingerprint":"fp_mock_prod")";
  if (d == Dialect::Anthropic || d == Dialect::Gemini) out += R"(,"system_fingerprint":null)";
  return out + R"(,"choices":[{"index":0,"message":)" + message +
         R"(,"logprobs":null,"finish_reason":)" + finish + R"(}],"usage":)" + usage + "}";
}

} // namespace mockllm
