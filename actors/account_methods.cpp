// Account, auth and utility methods of both servers (protocol.md §3.1-3.3, §3.6, §4.5-4.6;
// DECISIONS P1, P2), bound into the server's method table by bind_account_methods:
// getUserSavedConfig, getUserAgent, userInfo, loginApiKey, loginChatGpt, cancelLoginChatGpt,
// logoutChatGpt, getAuthStatus, account/read, account/login/start, account/login/cancel,
// account/logout, account/rateLimits/read, feedback/upload.
//
// llmx authenticates with API keys only: ChatGPT login answers an error that says which key the
// configured provider uses.
#include "actors/session_state.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/text.hpp"
#include "protocol/config/auth.hpp"
#include "protocol/rpc/account_api.hpp"

namespace llmx::session_detail {

namespace {

// --- helpers ------------------------------------------------------------------------------------------

// "apikey" when the configured provider has a key to send (its env_key variable, the key stored
// by loginApiKey / `llmx login`, or a literal bearer token), else nullopt.
std::optional<std::string> auth_method(const Config& cfg) {
  auto token = resolve_bearer_token(cfg.provider).token;
  if (token && !text::trim_view(*token).empty()) return std::string("apikey");
  return std::nullopt;
}

// The reference's `requires_openai_auth`: the provider takes the key loginApiKey stores.
bool requires_openai_auth(const Config& cfg) { return may_use_stored_api_key(cfg.provider); }

// Why ChatGPT login cannot work here, naming what the provider uses instead.
std::string chatgpt_login_error(const std::optional<Config>& cfg, std::string_view api_key_method) {
  std::string msg = "ChatGPT login is not supported by llmx";
  if (!cfg) return msg + fmt::format("; use {} to store an API key", api_key_method);
  const auto& p = cfg->provider;
  if (p.env_key)
    return msg + fmt::format(": the configured provider `{}` authenticates with an API key from the {} environment "
                             "variable or one stored with {}",
                             p.id, *p.env_key, api_key_method);
  if (may_use_stored_api_key(p))
    return msg + fmt::format(": the configured provider `{}` authenticates with an API key stored with {}", p.id,
                             api_key_method);
  return msg + fmt::format(": the configured provider `{}` needs no login", p.id);
}

// The session's config, or nullopt when it cannot be derived (the ChatGPT login errors then name
// no provider).
std::optional<Config> config_if_any(session_ptr self) {
  try {
    return resolve_config(self);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

constexpr std::string_view kApiKeyDisabled =
    "API key login is disabled by `forced_login_method = \"chatgpt\"` in config.toml, and llmx does not support "
    "ChatGPT login";

// Stores the key; answers the error itself and returns nullopt on failure, else the auth method
// in effect afterwards.
template <class R>
std::optional<Nullable<std::string>> store_api_key(session_ptr self, const Reply<R>& reply, const std::string& key) {
  if (text::trim_view(key).empty()) {
    reply.error(rpc::kInvalidParams, "Invalid params: `apiKey` must not be empty");
    return std::nullopt;
  }
  auto cfg = config_or_error(self, reply);
  if (!cfg) return std::nullopt;
  if (cfg->forced_login_method == "chatgpt") {
    reply.error(rpc::kInvalidRequest, std::string(kApiKeyDisabled));
    return std::nullopt;
  }
  try {
    auth::save_api_key(cfg->llmx_home, key);
  } catch (const std::exception& err) {
    reply.error(rpc::kInternalError, fmt::format("failed to save api key: {}", err.what()));
    return std::nullopt;
  }
  cfg->provider.stored_api_key = text::trim(key);
  return Nullable<std::string>(auth_method(*cfg));
}

// Deletes auth.json; answers the error itself and returns nullopt on failure, else the auth
// method still in effect (an env_key variable survives a logout).
template <class R>
std::optional<Nullable<std::string>> remove_credentials(session_ptr self, const Reply<R>& reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return std::nullopt;
  try {
    auth::logout(cfg->llmx_home);
  } catch (const std::exception& err) {
    reply.error(rpc::kInternalError, fmt::format("logout failed: {}", err.what()));
    return std::nullopt;
  }
  cfg->provider.stored_api_key.reset();
  return Nullable<std::string>(auth_method(*cfg));
}

// --- settings and identity ---------------------------------------------------------------------------

void get_user_saved_config(session_ptr, NoParams, Reply<api::GetUserSavedConfigResult> reply) {
  api::GetUserSavedConfigResult r;
  try {
    r.config = api::load_user_saved_config(llmx_home());
  } catch (const api::SavedConfigError& err) {
    return reply.error(rpc::kInternalError,
                       fmt::format("failed to {} config.toml: {}", err.unreadable ? "load" : "parse", err.what()));
  } catch (const std::exception& err) {
    return reply.error(rpc::kInternalError, fmt::format("failed to load config.toml: {}", err.what()));
  }
  reply(r);
}

void get_user_agent(session_ptr self, NoParams, Reply<api::GetUserAgentResult> reply) {
  reply(api::GetUserAgentResult{user_agent(self->state.client_suffix)});
}

void user_info(session_ptr, NoParams, Reply<api::UserInfoResult> reply) { reply(api::UserInfoResult{}); }

// --- v1 auth -------------------------------------------------------------------------------------------

void login_api_key(session_ptr self, api::LoginApiKeyParams p, Reply<Empty> reply) {
  auto method = store_api_key(self, reply, p.apiKey);
  if (!method) return;
  reply(Empty{});
  notify(self, "authStatusChange", json::to_json(api::AuthStatusChangeNotification{*method}));
}

// LoginChatGptResponse exists only in the schema (llmx never logs in to ChatGPT): the answer is
// always an error.
void login_chatgpt(session_ptr self, NoParams, Reply<Empty> reply) {
  reply.error(rpc::kInvalidRequest, chatgpt_login_error(config_if_any(self), "loginApiKey"));
}

void cancel_login_chatgpt(session_ptr, api::CancelLoginChatGptParams p, Reply<Empty> reply) {
  if (!is_uuid(p.loginId))
    return reply.error(rpc::kInvalidParams, fmt::format("Invalid params: `loginId` is not a UUID: {}", p.loginId));
  reply.error(rpc::kInvalidRequest, fmt::format("login id not found: {}", p.loginId));
}

void logout_chatgpt(session_ptr self, NoParams, Reply<Empty> reply) {
  auto method = remove_credentials(self, reply);
  if (!method) return;
  reply(Empty{});
  notify(self, "authStatusChange", json::to_json(api::AuthStatusChangeNotification{*method}));
}

void get_auth_status(session_ptr self, api::GetAuthStatusParams p, Reply<api::GetAuthStatusResult> reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  // refreshToken: API keys have nothing to refresh.
  api::GetAuthStatusResult r;
  r.authMethod = auth_method(*cfg);
  if (r.authMethod && p.includeToken.value_or(false)) r.authToken = resolve_bearer_token(cfg->provider).token;
  r.requiresOpenaiAuth = requires_openai_auth(*cfg);
  reply(r);
}

// --- v2 account -----------------------------------------------------------------------------------------

void account_read(session_ptr self, api::AccountReadParams, Reply<api::AccountReadResult> reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  api::AccountReadResult r;
  if (auth_method(*cfg)) r.account = api::Account{};
  r.requiresOpenaiAuth = requires_openai_auth(*cfg);
  reply(r);
}

void account_login_start(session_ptr self, api::LoginStartParams p, Reply<api::LoginStartApiKeyResult> reply) {
  if (p.is<api::LoginStartChatGpt>())
    return reply.error(rpc::kInvalidRequest,
                       chatgpt_login_error(config_if_any(self), "account/login/start {\"type\":\"apiKey\"}"));
  auto method = store_api_key(self, reply, p.get_if<api::LoginStartApiKey>()->apiKey);
  if (!method) return;
  reply(api::LoginStartApiKeyResult{});
  notify(self, "account/login/completed", json::to_json(api::LoginCompletedNotification{std::nullopt, true, std::nullopt}));
  notify(self, "account/updated", json::to_json(api::AccountUpdatedNotification{*method}));
}

void account_login_cancel(session_ptr, api::LoginCancelParams p, Reply<Empty> reply) {
  if (!is_uuid(p.loginId)) return reply.error(rpc::kInvalidRequest, fmt::format("invalid login id: {}", p.loginId));
  reply.error(rpc::kInvalidRequest, fmt::format("login id not found: {}", p.loginId));
}

void account_logout(session_ptr self, NoParams, Reply<Empty> reply) {
  auto method = remove_credentials(self, reply);
  if (!method) return;
  reply(Empty{});
  notify(self, "account/updated", json::to_json(api::AccountUpdatedNotification{*method}));
}

void account_rate_limits_read(session_ptr self, NoParams, Reply<api::RateLimitsResult> reply) {
  const auto& last = self->state.last_rate_limits;
  if (!last)
    return reply.error(rpc::kInvalidRequest,
                       "no rate-limit information yet: the provider has not sent rate-limit headers");
  reply(api::RateLimitsResult{api::to_v2(*last)});
}

void feedback_upload(session_ptr, api::FeedbackUploadParams p, Reply<api::FeedbackUploadResult> reply) {
  if (p.conversationId && !is_uuid(*p.conversationId))
    return reply.error(rpc::kInvalidParams,
                       fmt::format("Invalid params: `conversationId` is not a UUID: {}", *p.conversationId));
  try {
    api::append_feedback(llmx_home(), api::feedback_line(p, std::chrono::system_clock::now()));
  } catch (const std::exception& err) {
    return reply.error(rpc::kInternalError, fmt::format("failed to upload feedback: {}", err.what()));
  }
  reply(api::FeedbackUploadResult{p.conversationId.value_or("")});
}

}  // namespace

void bind_account_methods(Methods& t) {
  t.bind<NoParams, api::GetUserSavedConfigResult>("getUserSavedConfig", get_user_saved_config);
  t.bind<NoParams, api::GetUserAgentResult>("getUserAgent", get_user_agent);
  t.bind<NoParams, api::UserInfoResult>("userInfo", user_info);
  t.bind<api::LoginApiKeyParams, Empty>("loginApiKey", login_api_key);
  t.bind<NoParams, Empty>("loginChatGpt", login_chatgpt);
  t.bind<api::CancelLoginChatGptParams, Empty>("cancelLoginChatGpt", cancel_login_chatgpt);
  t.bind<NoParams, Empty>("logoutChatGpt", logout_chatgpt);
  t.bind<api::GetAuthStatusParams, api::GetAuthStatusResult>("getAuthStatus", get_auth_status);
  t.bind<api::AccountReadParams, api::AccountReadResult>("account/read", account_read);
  t.bind<api::LoginStartParams, api::LoginStartApiKeyResult>("account/login/start", account_login_start);
  t.bind<api::LoginCancelParams, Empty>("account/login/cancel", account_login_cancel);
  t.bind<NoParams, Empty>("account/logout", account_logout);
  t.bind<NoParams, api::RateLimitsResult>("account/rateLimits/read", account_rate_limits_read);
  t.bind<api::FeedbackUploadParams, api::FeedbackUploadResult>("feedback/upload", feedback_upload);
}

void note_rate_limits(session_ptr self, const Event& ev, std::string& lines) {
  auto* tc = ev.msg.get_if<TokenCountEvent>();
  if (!tc || !tc->rate_limits) return;
  self->state.last_rate_limits = *tc->rate_limits;
  // Each response announces its headers once and again with its usage: tell the client only
  // what changed.
  auto params = json::to_json(api::RateLimitsResult{api::to_v2(*tc->rate_limits)});
  if (params == self->state.last_rate_limits_sent) return;
  self->state.last_rate_limits_sent = params;
  if (!lines.empty()) lines.push_back('\n');
  lines += self->state.rpc.notification("account/rateLimits/updated", params);
}

}  // namespace llmx::session_detail
