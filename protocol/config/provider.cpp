#include "protocol/config/provider.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/secret_env.hpp"
#include "protocol/base/text.hpp"

namespace llmx {

namespace {
std::optional<std::string> env(const char* name) {
  const char* v = env_value(name);
  if (!v) return std::nullopt;
  std::string s(v);
  if (s.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  return s;
}

std::string with_query(std::string url, const std::map<std::string, std::string>& q) {
  char sep = url.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : q) {
    url += sep;
    url += k + "=" + v;
    sep = '&';
  }
  return url;
}

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}
}  // namespace

std::string ModelProviderInfo::chat_url() const {
  return with_query(trim_slash(base_url.empty() ? "https://api.openai.com/v1" : base_url) + "/chat/completions",
                    query_params);
}

std::string ModelProviderInfo::responses_url() const {
  return with_query(trim_slash(base_url.empty() ? "https://api.openai.com/v1" : base_url) + "/responses",
                    query_params);
}

std::string ModelProviderInfo::models_url() const {
  return with_query(trim_slash(base_url.empty() ? "https://api.openai.com/v1" : base_url) + "/models", query_params);
}

std::string ModelProviderInfo::model_info_url() const {
  // LiteLLM serves it at /model/info and /v1/model/info, so it sits beside /models either way.
  return with_query(trim_slash(base_url.empty() ? "https://api.openai.com/v1" : base_url) + "/model/info",
                    query_params);
}

std::map<std::string, ModelProviderInfo> builtin_providers() {
  std::map<std::string, ModelProviderInfo> out;
  ModelProviderInfo litellm;
  litellm.id = "litellm";
  litellm.name = "LiteLLM";
  // LLMX_* first, then what the Codex SDK sets for the binary it drives.
  litellm.base_url = env("LLMX_BASE_URL").value_or(env("OPENAI_BASE_URL").value_or("http://localhost:4000/v1"));
  litellm.env_key = "LLMX_API_KEY";
  litellm.env_key_instructions = "Set LLMX_API_KEY to your LiteLLM API key. See https://docs.litellm.ai/ for setup.";
  litellm.wire_api = WireApi::chat;
  out["litellm"] = litellm;

  ModelProviderInfo openai;
  openai.id = "openai";
  openai.name = "OpenAI";
  openai.base_url = "https://api.openai.com/v1";
  openai.env_key = "OPENAI_API_KEY";
  openai.wire_api = WireApi::responses;
  openai.env_http_headers = {{"OpenAI-Organization", "OPENAI_ORGANIZATION"},
                             {"OpenAI-Project", "OPENAI_PROJECT"}};
  out["openai"] = openai;

  ModelProviderInfo oss;
  oss.id = "oss";
  oss.name = "gpt-oss";
  oss.base_url = env("LLMX_OSS_BASE_URL")
                     .value_or(fmt::format("http://localhost:{}/v1", env("LLMX_OSS_PORT").value_or("11434")));
  oss.wire_api = WireApi::chat;
  out["oss"] = oss;
  return out;
}

BearerToken resolve_bearer_token(const ModelProviderInfo& p) {
  if (p.experimental_bearer_token && !p.experimental_bearer_token->empty())
    return {p.experimental_bearer_token, std::nullopt};
  if (p.env_key) {
    if (auto v = env(p.env_key->c_str())) return {*v, std::nullopt};
    if (*p.env_key == "LLMX_API_KEY")  // the Codex SDK passes its key as CODEX_API_KEY
      if (auto v = env("CODEX_API_KEY")) return {*v, std::nullopt};
  }
  if (may_use_stored_api_key(p) && p.stored_api_key && !p.stored_api_key->empty())
    return {p.stored_api_key, std::nullopt};
  if (!p.env_key) return {};
  std::string msg = fmt::format("Missing environment variable: `{}`.", *p.env_key);
  if (p.env_key_instructions) msg += " " + *p.env_key_instructions;
  msg += " Or run `llmx login --api-key` to store a key.";
  return {std::nullopt, msg};
}

bool may_use_stored_api_key(const ModelProviderInfo& p) { return p.env_key.has_value() || p.id == "openai"; }

std::vector<std::pair<std::string, std::string>> provider_headers(const ModelProviderInfo& p, const BearerToken& token) {
  std::vector<std::pair<std::string, std::string>> out;
  if (token.token) out.emplace_back("Authorization", "Bearer " + *token.token);
  for (const auto& [k, v] : p.http_headers) out.emplace_back(k, v);
  for (const auto& [k, var] : p.env_http_headers)
    if (const char* val = env_value(var.c_str()); val && *val) out.emplace_back(k, val);
  return out;
}

bool wants_model_info(const ModelProviderInfo& p) {
  if (p.model_info) return *p.model_info;
  if (p.id == "openai") return false;
  return text::lower(p.name) != "azure" && p.base_url.find(".azure.") == std::string::npos;
}

void write_json(json::Writer& w, const ModelProviderInfo& x) {
  ModelProviderInfo shown = x;
  shown.stored_api_key.reset();
  w.begin_object();
  json::write_fields(w, shown);
  w.end_object();
}

}  // namespace llmx
