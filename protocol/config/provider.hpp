// Model providers (engine.md §4.3, DECISIONS E7): where requests go and how they authenticate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/core/events.hpp"

namespace llmx {

// `automatic` (config "auto", the default for providers llmx does not know): Responses first, and
// Chat for the rest of the process once the provider says it does not serve Responses.
enum class WireApi { chat, responses, automatic };
template <>
struct EnumTraits<WireApi> {
  static constexpr std::array<std::pair<WireApi, std::string_view>, 3> values{{
      {WireApi::chat, "chat"},
      {WireApi::responses, "responses"},
      {WireApi::automatic, "auto"},
  }};
};

// How reasoning goes back to a Chat Completions provider on later requests (DECISIONS E5):
// DeepSeek's thinking mode needs `reasoning_content` on every assistant message that made tool
// calls; Claude behind LiteLLM needs its signed `thinking_blocks` on them; some proxies read a
// `reasoning` field (the reference's anchors); most providers want nothing.
enum class ReasoningPassback { none, reasoning_content, thinking_blocks, reasoning };
template <>
struct EnumTraits<ReasoningPassback> {
  static constexpr std::array<std::pair<ReasoningPassback, std::string_view>, 4> values{{
      {ReasoningPassback::none, "none"},
      {ReasoningPassback::reasoning_content, "reasoning_content"},
      {ReasoningPassback::thinking_blocks, "thinking_blocks"},
      {ReasoningPassback::reasoning, "reasoning"},
  }};
};

struct ModelProviderInfo {
  friend bool operator==(const ModelProviderInfo&, const ModelProviderInfo&) = default;
  std::string id;  // key in [model_providers.<id>]
  std::string name;
  std::string base_url;
  std::optional<std::string> env_key;
  std::optional<std::string> env_key_instructions;
  std::optional<std::string> experimental_bearer_token;
  WireApi wire_api = WireApi::chat;
  std::map<std::string, std::string> query_params;
  std::map<std::string, std::string> http_headers;
  std::map<std::string, std::string> env_http_headers;
  int64_t request_max_retries = 4;
  int64_t stream_max_retries = 5;
  int64_t stream_idle_timeout_ms = 300000;
  std::optional<int64_t> max_tokens;
  bool include_usage = true;                // E4: ask for usage in the stream
  std::optional<bool> prompt_cache;         // E6: force cache_control markers on or off
  // E5; unset = by model name: "deepseek" → reasoning_content, "claude" → thinking_blocks.
  std::optional<ReasoningPassback> reasoning_passback;
  // How long the provider's model list (GET /models, LiteLLM's /model/info) is used before it is
  // fetched again in the background (issue 19); a failed fetch is retried after min(ttl, 30 s).
  int64_t models_cache_ttl_secs = 300;
  // Whether to ask LiteLLM's /model/info for context windows and capabilities; unset = every
  // provider but OpenAI's and Azure's (a server without it answers 404, which is fine).
  std::optional<bool> model_info;
  // The key stored by `llmx login` (auth.json), attached once when the configuration is loaded
  // (auth::attach_stored_api_key) so requests never read the file. It crosses actor boundaries
  // but is never written as JSON (see write_json below).
  std::optional<std::string> stored_api_key;
  LLMX_FIELDS(v("id", s.id); v("name", s.name); v("base_url", s.base_url); v("env_key", s.env_key);
              v("env_key_instructions", s.env_key_instructions);
              v("experimental_bearer_token", s.experimental_bearer_token);
              v("wire_api", s.wire_api); v("query_params", s.query_params);
              v("http_headers", s.http_headers); v("env_http_headers", s.env_http_headers);
              v("request_max_retries", s.request_max_retries);
              v("stream_max_retries", s.stream_max_retries);
              v("stream_idle_timeout_ms", s.stream_idle_timeout_ms); v("max_tokens", s.max_tokens);
              v("include_usage", s.include_usage); v("prompt_cache", s.prompt_cache);
              v("reasoning_passback", s.reasoning_passback);
              v("models_cache_ttl_secs", s.models_cache_ttl_secs, Field::defaulted);
              v("model_info", s.model_info);
              v("stored_api_key", s.stored_api_key, Field::defaulted))

  // `{base_url}/chat/completions?{query}`.
  std::string chat_url() const;
  std::string responses_url() const;
  std::string models_url() const;      // `{base_url}/models?{query}`
  std::string model_info_url() const;  // LiteLLM's `{base_url}/model/info?{query}`
  // What the provider's model list and its remembered wire are kept under: id and base URL.
  std::string cache_key() const { return id + " " + base_url; }
};

// JSON encoding of a provider: every field except `stored_api_key`, so the stored key never
// leaves the process in a rollout, a reply or a log line.
void write_json(json::Writer& w, const ModelProviderInfo& x);

// The built-in providers, with LLMX_BASE_URL / LLMX_API_KEY applied to `litellm` (E7).
std::map<std::string, ModelProviderInfo> builtin_providers();

// Resolves the bearer token, first found wins: the literal `experimental_bearer_token`; the
// `env_key` variable when set and non-blank; the key stored by `llmx login` (for providers with
// an `env_key`, and the built-in `openai`). A provider that declares `env_key` and finds none of
// them gets an error message naming the variable; one without `env_key` gets no token.
struct BearerToken {
  std::optional<std::string> token;
  std::optional<std::string> error;
};
BearerToken resolve_bearer_token(const ModelProviderInfo& p);

// Whether a provider may fall back to the key stored by `llmx login`: providers that declare an
// `env_key`, and the built-in `openai` provider (the reference's `requires_openai_auth`).
bool may_use_stored_api_key(const ModelProviderInfo& p);

// The headers every request to the provider carries besides its own: the bearer token (when
// resolved), `http_headers`, and `env_http_headers` whose variables are set.
std::vector<std::pair<std::string, std::string>> provider_headers(const ModelProviderInfo& p, const BearerToken& token);

// Whether the provider is asked for LiteLLM's /model/info (see ModelProviderInfo::model_info).
bool wants_model_info(const ModelProviderInfo& p);

}  // namespace llmx
