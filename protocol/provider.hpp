// Model providers (engine.md §4.3, DECISIONS E7): where requests go and how they authenticate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "protocol/events.hpp"

namespace llmx {

enum class WireApi { chat, responses };
template <>
struct EnumTraits<WireApi> {
  static constexpr std::array<std::pair<WireApi, std::string_view>, 2> values{{
      {WireApi::chat, "chat"},
      {WireApi::responses, "responses"},
  }};
};

struct ModelProviderInfo {
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
  LLMX_FIELDS(v("id", s.id); v("name", s.name); v("base_url", s.base_url); v("env_key", s.env_key);
              v("env_key_instructions", s.env_key_instructions);
              v("experimental_bearer_token", s.experimental_bearer_token);
              v("wire_api", s.wire_api); v("query_params", s.query_params);
              v("http_headers", s.http_headers); v("env_http_headers", s.env_http_headers);
              v("request_max_retries", s.request_max_retries);
              v("stream_max_retries", s.stream_max_retries);
              v("stream_idle_timeout_ms", s.stream_idle_timeout_ms); v("max_tokens", s.max_tokens);
              v("include_usage", s.include_usage); v("prompt_cache", s.prompt_cache))

  // `{base_url}/chat/completions?{query}`.
  std::string chat_url() const;
  std::string responses_url() const;
};

// The built-in providers, with LLMX_BASE_URL / LLMX_API_KEY applied to `litellm` (E7).
std::map<std::string, ModelProviderInfo> builtin_providers();

// Resolves the bearer token: literal token, else the env var (an error message when it is
// declared but unset or blank), else none.
struct BearerToken {
  std::optional<std::string> token;
  std::optional<std::string> error;
};
BearerToken resolve_bearer_token(const ModelProviderInfo& p);

}  // namespace llmx
