#include "tools/mock-llm/dialects.hpp"

#include "tools/mock-llm/text_util.hpp"

#include <ctime>
#include <map>

namespace mockllm {
namespace {

struct Named {
  const char *name;
  Dialect dialect;
};

constexpr Named kDialects[] = {
    {"default", Dialect::Default},   {"openai", Dialect::OpenAI},
    {"anthropic", Dialect::Anthropic}, {"gemini", Dialect::Gemini},
    {"deepseek", Dialect::DeepSeek}, {"vllm", Dialect::VLLM},
    {"azure", Dialect::Azure},
};


std::string uuid_like(std::string_view seed) {
  const std::string h = mock_token(seed, 32, kHex);
  return h.substr(0, 8) + '-' + h.substr(8, 4) + '-' + h.substr(12, 4) + '-' + h.substr(16, 4) +
         '-' + h.substr(20);
}

std::string sse_data(const std::string &json) { return "data: " + json + "\n\n"; }

// Streams one Script in a provider's chunk shape. Stateful: it tracks what came before to
// place usage, number Claude's content blocks and close Claude's thinking block.
class DialectRenderer final : public FrameRenderer {
public:
  DialectRenderer(const Script &script, const ResponseContext &ctx)
      : d_(ctx.dialect), ctx_(ctx) {
    for (const Event &e : script.events) {
      if (e.kind == EventKind::Reasoning) ++reasoning_left_;
      if (e.kind == EventKind::ToolArgs) whole_args_[e.index] += e.text;
    }
    has_reasoning_ = reasoning_left_ > 0;
  }

  void render(const Event &e, Frames &out) override {
    if (d_ == Dialect::Azure && !prompt_filter_sent_) { // Azure's first event, before the role
      prompt_filter_sent_ = true;
      out.push_back(sse_data(R"({"choices":[],"created":0,"id":"","model":"","object":"",)"
                             R"("prompt_filter_results":[{"prompt_index":0,)"
                             R"("content_filter_results":)" +
                             azure_filter_results(false) + "}]}"));
    }
    switch (e.kind) {
    case EventKind::Role: out.push_back(chunk(role_delta(), "null", "{}")); break;
    case EventKind::Content:
      if (!e.text.empty()) ++content_deltas_;
      saw_text_ = saw_text_ || !e.text.empty();
      out.push_back(chunk(content_delta(e), "null", azure_filter_results(false)));
      break;
    case EventKind::Reasoning: render_reasoning(e, out); break;
    case EventKind::ToolStart: render_tool_start(e, out); break;
    case EventKind::ToolArgs: render_tool_args(e, out); break;
    case EventKind::Finish: render_finish(e, out); break;
    case EventKind::NoChoices: out.push_back(sse_data(envelope("[]", {}))); break;
    case EventKind::StreamError: out.push_back(sse_data(e.text)); break;
    default: break;
    }
  }

  void finish(Frames &out) override { out.push_back("data: [DONE]\n\n"); }

private:
  // The chunk object around `choices` (a JSON array); `usage` empty means no usage member,
  // except that OpenAI marks every chunk "usage":null once usage was asked for.
  std::string envelope(const std::string &choices, const std::string &usage) const {
    std::string id = json_string(ctx_.id), model = json_string(ctx_.model);
    const std::string created = std::to_string(ctx_.created);
    std::string u = usage;
    if (u.empty() && d_ == Dialect::OpenAI && ctx_.include_usage) u = "null";
    const std::string usage_member = u.empty() ? "" : R"(,"usage":)" + u;
    switch (d_) {
    case Dialect::Anthropic:
    case Dialect::Gemini: // LiteLLM's ModelResponseStream
      return R"({"id":)" + id + R"(,"created":)" + created + R"(,"model":)" + model +
             R"(,"object":"chat.completion.chunk","system_fingerprint":null,"choices":)" +
             choices + usage_member + "}";
    case Dialect::Azure: // Azure serialises keys in alphabetical order
      return R"({"choices":)" + choices + R"(,"created":)" + created + R"(,"id":)" + id +
             R"(,"model":)" + model +
             R"(,"object":"chat.completion.chunk","system_fingerprint":"fp_mock")" +
             usage_member + "}";
    default: {
      std::string out = R"({"id":)" + id + R"(,"object":"chat.completion.chunk","created":)" +
                        created + R"(,"model":)" + model;
      if (d_ == Dialect::OpenAI) out += R"(,"system_fingerprint":"fp_mock")";
      if (d_ == Dialect::DeepSeek) out += R"(,"system_fingerprint":"fp_mock_prod")";
      return out + R"(,"choices":)" + choices + usage_member + "}";
    }
    }
  }

  // One choice with `delta`; `finish` is JSON (null or a string); `filter` is Azure's
  // content_filter_results.
  std::string chunk(const std::string &delta, const std::string &finish,
                    const std::string &filter, const std::string &usage = {}) const {
    std::string choice;
    switch (d_) {
    case Dialect::Anthropic:
    case Dialect::Gemini:
      choice = R"({"finish_reason":)" + finish + R"(,"index":0,"delta":)" + delta + "}";
      break;
    case Dialect::Azure:
      choice = R"({"content_filter_results":)" + filter + R"(,"delta":)" + delta +
               R"(,"finish_reason":)" + finish + R"(,"index":0,"logprobs":null})";
      break;
    default:
      choice = R"({"index":0,"delta":)" + delta + R"(,"logprobs":null,"finish_reason":)" +
               finish + "}";
    }
    return sse_data(envelope("[" + choice + "]", usage));
  }

  std::string role_delta() const {
    switch (d_) {
    case Dialect::OpenAI: return R"({"role":"assistant","content":"","refusal":null})";
    case Dialect::Azure: return R"({"content":"","refusal":null,"role":"assistant"})";
    case Dialect::Anthropic:
    case Dialect::Gemini: return R"({"content":"","role":"assistant"})";
    case Dialect::DeepSeek: // deepseek-reasoner opens with an empty reasoning_content
      return has_reasoning_ ? R"({"role":"assistant","content":null,"reasoning_content":""})"
                            : R"({"role":"assistant","content":""})";
    default: return R"({"role":"assistant","content":""})";
    }
  }

  std::string content_delta(const Event &e) const {
    std::string d = R"({"content":)";
    append_event_text(d, e);
    if (d_ == Dialect::Anthropic || d_ == Dialect::Gemini) d += R"(,"role":"assistant")";
    if (d_ == Dialect::DeepSeek) d += R"(,"reasoning_content":null)";
    return d + "}";
  }

  // Only Claude (thinking blocks) and DeepSeek (reasoning_content) stream reasoning; the other
  // providers never show it, so their streams drop it.
  void render_reasoning(const Event &e, Frames &out) {
    --reasoning_left_;
    const std::string text = json_string(e.text);
    if (d_ == Dialect::DeepSeek) {
      reasoning_bytes_ += e.text.size();
      out.push_back(chunk(R"({"content":null,"reasoning_content":)" + text + "}", "null", {}));
    } else if (d_ == Dialect::Anthropic) {
      saw_reasoning_ = true;
      out.push_back(chunk(R"({"reasoning_content":)" + text +
                              R"(,"thinking_blocks":[{"type":"thinking","thinking":)" + text +
                              R"(,"signature":null}]})",
                          "null", {}));
      if (reasoning_left_ == 0) // the block closes with its signature
        out.push_back(chunk(R"({"reasoning_content":"","thinking_blocks":[{"type":"thinking",)"
                            R"("thinking":"","signature":)" +
                                json_string(thinking_signature(ctx_)) + "}]}",
                            "null", {}));
    }
  }

  // Claude numbers tool calls by content block: thinking and text blocks come first.
  int anthropic_index(int script_index) {
    if (block_offset_ < 0) block_offset_ = (saw_reasoning_ ? 1 : 0) + (saw_text_ ? 1 : 0);
    return block_offset_ + script_index;
  }

  void render_tool_start(const Event &e, Frames &out) {
    const std::string name = json_string(e.name);
    const std::string index = std::to_string(e.index);
    const std::string filter = azure_filter_results(false);
    switch (d_) {
    case Dialect::Anthropic:
      out.push_back(chunk(R"({"content":"","tool_calls":[{"id":)" +
                              json_string(tool_call_id(ctx_, e)) +
                              R"(,"function":{"arguments":"","name":)" + name +
                              R"(},"type":"function","index":)" +
                              std::to_string(anthropic_index(e.index)) + "}]}",
                          "null", {}));
      break;
    case Dialect::Gemini:
    case Dialect::VLLM: // the whole call in one chunk, without an id
      out.push_back(chunk(R"({"tool_calls":[{"index":)" + index +
                              R"(,"type":"function","function":{"name":)" + name +
                              R"(,"arguments":)" + json_string(whole_args_[e.index]) + "}}]}",
                          "null", {}));
      break;
    default:
      out.push_back(chunk(R"({"tool_calls":[{"index":)" + index + R"(,"id":)" +
                              json_string(tool_call_id(ctx_, e)) +
                              R"(,"type":"function","function":{"name":)" + name +
                              R"(,"arguments":""}}]})",
                          "null", filter));
    }
  }

  void render_tool_args(const Event &e, Frames &out) {
    const std::string args = json_string(e.text);
    switch (d_) {
    case Dialect::Gemini:
    case Dialect::VLLM: break; // already sent whole with the start
    case Dialect::Anthropic:
      out.push_back(chunk(R"({"tool_calls":[{"id":null,"function":{"arguments":)" + args +
                              R"(,"name":null},"type":"function","index":)" +
                              std::to_string(anthropic_index(e.index)) + "}]}",
                          "null", {}));
      break;
    default:
      out.push_back(chunk(R"({"tool_calls":[{"index":)" + std::to_string(e.index) +
                              R"(,"function":{"arguments":)" + args + "}}]}",
                          "null", azure_filter_results(false)));
    }
  }

  void render_finish(const Event &e, Frames &out) {
    const std::string reason = json_string(dialect_finish_reason(d_, e.text));
    const std::string filter = e.text == "content_filter" ? azure_filter_results(true) : "{}";
    const std::string usage = dialect_usage_json(d_, ctx_.prompt_tokens, content_deltas_,
                                                 reasoning_bytes_);
    // Gemini (via LiteLLM) and DeepSeek put usage into the finish chunk itself.
    const bool usage_inline =
        ctx_.include_usage && (d_ == Dialect::Gemini || d_ == Dialect::DeepSeek);
    out.push_back(chunk("{}", reason, filter, usage_inline ? usage : std::string()));
    // vLLM reports usage even unasked; the others only with stream_options.include_usage.
    const bool usage_after =
        d_ == Dialect::VLLM || (ctx_.include_usage && !usage_inline);
    if (usage_after) out.push_back(sse_data(envelope("[]", usage)));
  }

  Dialect d_;
  ResponseContext ctx_;
  size_t content_deltas_ = 0, reasoning_bytes_ = 0, reasoning_left_ = 0;
  bool has_reasoning_ = false, saw_reasoning_ = false, saw_text_ = false;
  bool prompt_filter_sent_ = false;
  int block_offset_ = -1;
  std::map<int, std::string> whole_args_;
};

} // namespace

std::optional<Dialect> parse_dialect(std::string_view name) {
  for (const auto &n : kDialects)
    if (name == n.name) return n.dialect;
  return std::nullopt;
}

const std::vector<std::string> &dialect_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto &n : kDialects) out.emplace_back(n.name);
    return out;
  }();
  return names;
}

std::string mock_token(std::string_view seed, size_t n, std::string_view alphabet) {
  uint64_t x = 1469598103934665603ULL; // FNV-1a of the seed, then a splitmix64 stream
  for (char c : seed) x = (x ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    out.push_back(alphabet[z % alphabet.size()]);
  }
  return out;
}

std::string tool_call_id(const ResponseContext &ctx, const Event &start) {
  const std::string seed = ctx.id + "/" + start.id + "/" + std::to_string(start.index);
  switch (ctx.dialect) {
  case Dialect::OpenAI:
  case Dialect::Azure: return "call_" + mock_token(seed, 24, kAlnum);
  case Dialect::Anthropic: return "toolu_01" + mock_token(seed, 22, kAlnum);
  case Dialect::DeepSeek: return "call_0_" + uuid_like(seed);
  case Dialect::Gemini:
  case Dialect::VLLM: return {};
  default: return start.id;
  }
}

HeaderList dialect_headers(Dialect d, const std::string &seed) {
  HeaderList h;
  switch (d) {
  case Dialect::OpenAI:
    h = rate_limit_headers("openai", 75);
    h.emplace_back("x-request-id", "req_" + mock_token(seed, 32, kHex));
    break;
  case Dialect::Anthropic: // LiteLLM normalises the limits and forwards the provider's own
    h = {{"x-ratelimit-limit-requests", "100"},
         {"x-ratelimit-remaining-requests", "75"},
         {"x-ratelimit-limit-tokens", "10000"},
         {"x-ratelimit-remaining-tokens", "7500"},
         {"llm_provider-anthropic-ratelimit-requests-limit", "100"},
         {"llm_provider-anthropic-ratelimit-requests-remaining", "75"},
         {"llm_provider-anthropic-ratelimit-requests-reset", format_utc(std::time(nullptr) + 60, "%Y-%m-%dT%H:%M:%SZ")},
         {"llm_provider-anthropic-ratelimit-tokens-limit", "10000"},
         {"llm_provider-anthropic-ratelimit-tokens-remaining", "7500"},
         {"x-litellm-model-id", mock_token(seed + "/model", 64, kHex)}};
    break;
  case Dialect::Azure: // remaining counts only, no limits or resets
    h = {{"x-ratelimit-remaining-requests", "75"},
         {"x-ratelimit-remaining-tokens", "7500"},
         {"apim-request-id", uuid_like(seed)}};
    break;
  default: break;
  }
  return h;
}

std::shared_ptr<FrameRenderer> make_dialect_renderer(const Script &script,
                                                     const ResponseContext &ctx) {
  return std::make_shared<DialectRenderer>(script, ctx);
}

std::string dialect_usage_json(Dialect d, size_t prompt, size_t content_deltas,
                               size_t reasoning_bytes) {
  const size_t reasoning = d == Dialect::DeepSeek ? reasoning_bytes / 4 : 0;
  const size_t completion = content_deltas + reasoning;
  const std::string p = std::to_string(prompt), c = std::to_string(completion),
                    t = std::to_string(prompt + completion);
  switch (d) {
  case Dialect::Anthropic: { // half the prompt read from cache, so caching is visible
    const std::string cached = std::to_string(prompt / 2);
    return R"({"completion_tokens":)" + c + R"(,"prompt_tokens":)" + p + R"(,"total_tokens":)" +
           t + R"(,"prompt_tokens_details":{"cached_tokens":)" + cached +
           R"(},"cache_creation_input_tokens":0,"cache_read_input_tokens":)" + cached + "}";
  }
  case Dialect::Gemini:
    return R"({"completion_tokens":)" + c + R"(,"prompt_tokens":)" + p + R"(,"total_tokens":)" +
           t + "}";
  case Dialect::DeepSeek: { // a quarter of the prompt hits DeepSeek's context cache
    const size_t hit = prompt / 4;
    return R"({"prompt_tokens":)" + p + R"(,"completion_tokens":)" + c + R"(,"total_tokens":)" +
           t + R"(,"prompt_tokens_details":{"cached_tokens":)" + std::to_string(hit) +
           R"(},"prompt_cache_hit_tokens":)" + std::to_string(hit) +
           R"(,"prompt_cache_miss_tokens":)" + std::to_string(prompt - hit) +
           R"(,"completion_tokens_details":{"reasoning_tokens":)" + std::to_string(reasoning) +
           "}}";
  }
  case Dialect::VLLM:
    return R"({"prompt_tokens":)" + p + R"(,"total_tokens":)" + t + R"(,"completion_tokens":)" +
           c + "}";
  default: // OpenAI and Azure
    return R"({"prompt_tokens":)" + p + R"(,"completion_tokens":)" + c + R"(,"total_tokens":)" +
           t +
           R"(,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},)"
           R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,)"
           R"("accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})";
  }
}

std::string thinking_signature(const ResponseContext &ctx) {
  return "EqoBmock" + mock_token(ctx.id + "/signature", 80, kBase64);
}

std::string azure_filter_results(bool violence_filtered) {
  constexpr const char *safe = R"({"filtered":false,"severity":"safe"})";
  return std::string(R"({"hate":)") + safe + R"(,"self_harm":)" + safe + R"(,"sexual":)" + safe +
         R"(,"violence":)" + (violence_filtered ? R"({"filtered":true,"severity":"high"})" : safe) +
         "}";
}

std::string dialect_finish_reason(Dialect d, const std::string &reason) {
  if (d == Dialect::Gemini && reason == "tool_calls") return "stop";
  return reason;
}

} // namespace mockllm
