// Account, auth and utility methods of both servers (protocol.md §3.1-3.3, §3.6, §4.5-4.6;
// DECISIONS P1, P2), bound into the server's method table by bind_account_methods:
// getConversationSummary, getUserSavedConfig, getUserAgent, userInfo, loginApiKey, loginChatGpt,
// cancelLoginChatGpt, logoutChatGpt, getAuthStatus, account/read, account/login/start,
// account/login/cancel, account/logout, account/rateLimits/read, feedback/upload,
// gitDiffToRemote, execOneOffCommand, fuzzyFileSearch.
//
// llmx authenticates with API keys only: ChatGPT login answers an error that says which key the
// configured provider uses. The session actor never blocks: commands run through an exec sandbox
// actor, and git and the file walk run in a detached actor each (protocol/rpc/account_api.hpp holds
// the plain code).
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <variant>

#include "actors/exec_sandbox.hpp"
#include "actors/rollout_store.hpp"
#include "actors/session_state.hpp"
#include "protocol/rpc/account_api.hpp"
#include "protocol/config/auth.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/log.hpp"
#include "protocol/base/text.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/run_command.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx::session_detail {

namespace {

namespace fs = std::filesystem;

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

// Runs `work` in a detached actor (it may block) and answers the request with its outcome: its
// result, the RpcError it throws, or -32603 with the what() of any other exception. `after` runs
// on the session afterwards, before the answer. The worker leaves the outcome in a slot before it
// answers `start` (that message orders the two), so the session reads it only once it is there.
// (`work` is not deduced: R comes from the Reply, and a lambda converts.)
template <class R>
void offload(session_ptr self, Reply<R> reply, std::type_identity_t<std::function<R()>> work,
             std::function<void()> after = {}) {
  auto slot = std::make_shared<std::variant<std::monostate, R, RpcError>>();
  auto worker =
      self->spawn<caf::detached>([work = std::move(work), slot](caf::event_based_actor* a) -> caf::behavior {
        return {[=](start_atom) {
          auto promise = a->make_response_promise();
          try {
            *slot = work();
          } catch (const RpcError& err) {
            *slot = err;
          } catch (const std::exception& err) {
            *slot = RpcError{rpc::kInternalError, err.what()};
          }
          promise.deliver(true);
          a->quit();
        }};
      });
  self->request(worker, caf::infinite, start_atom::value)
      .then(
          [=](bool) {
            if (after) after();
            if (auto* result = std::get_if<R>(slot.get())) return reply(*result);
            if (auto* err = std::get_if<RpcError>(slot.get())) return reply(*err);
            reply.error(rpc::kInternalError, "the worker left no outcome");  // not reached
          },
          [=](caf::error& err) {
            if (after) after();
            reply.error(rpc::kInternalError, self->system().render(err));
          });
}

// --- conversations ---------------------------------------------------------------------------------

void get_conversation_summary(session_ptr self, api::GetConversationSummaryParams p,
                              Reply<api::GetConversationSummaryResult> reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  api::SummaryTarget target;
  try {
    target = api::summary_target(p, cfg->llmx_home);
  } catch (const std::invalid_argument& err) {
    return reply.error(rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what()));
  }
  if (target.bad_id)
    return reply.error(rpc::kInvalidRequest,
                       fmt::format("no rollout found for conversation id {}", target.id.value_or("")));
  auto provider = cfg->provider.id;
  auto where = target.path.value_or(target.id.value_or(""));
  self->request(self->state.store, caf::infinite, summary_atom::value, ThreadRef{cfg->llmx_home, target.id, target.path})
      .then(
          [=](ThreadSummaryReply& r) {
            reply(api::GetConversationSummaryResult{api::summary_from(r.summary, provider)});
          },
          [=](caf::error& err) {
            if (is_request_error(err)) return reply.error(rpc::kInvalidRequest, error_text(err));
            reply.error(rpc::kInternalError,
                        fmt::format("failed to load conversation summary from {}: {}", where, error_text(err)));
          });
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

// --- git, commands, files ------------------------------------------------------------------------------

void git_diff_to_remote(session_ptr self, api::GitDiffToRemoteParams p, Reply<api::GitDiffToRemoteResult> reply) {
  auto cwd = std::move(p.cwd);
  offload(self, reply, [cwd]() -> api::GitDiffToRemoteResult {
    auto r = workspace::git_diff_to_remote(cwd, [](const auto& argv, const auto& env, auto timeout) {
      return sandbox::run_command(argv, env, timeout);
    });
    if (!r)
      throw RpcError{rpc::kInvalidRequest,
                     fmt::format("failed to compute git diff to remote for cwd: {}", json::to_json(cwd))};
    return std::move(*r);
  });
}

void exec_one_off_command(session_ptr self, api::ExecOneOffCommandParams p, Reply<api::ExecOneOffCommandResult> reply) {
  if (p.command.empty()) return reply.error(rpc::kInvalidRequest, "command must not be empty");
  if (p.timeoutMs && *p.timeoutMs <= 0)
    return reply.error(rpc::kInvalidParams,
                       fmt::format("Invalid params: `timeoutMs` must be a positive number of milliseconds, got {}",
                                   *p.timeoutMs));
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  SandboxPolicy policy = p.sandboxPolicy.value_or(cfg->sandbox_policy);
  fs::path cwd = p.cwd ? fs::path(*p.cwd) : fs::path(cfg->cwd);
  if (cwd.is_relative()) cwd = fs::path(cfg->cwd) / cwd;

  ExecRequest req;
  req.call_id = "one-off-" + new_uuid_v4();
  req.argv = std::move(p.command);
  req.cwd = cwd.lexically_normal().string();
  const auto& ep = cfg->shell_environment_policy;
  sandbox::ShellEnvironmentPolicy env_policy{ep.inherit, ep.ignore_default_excludes, ep.exclude, ep.set, ep.include_only};
  req.env = sandbox::build_child_env(env_policy, sandbox::current_process_env(), !policy.has_network());
  if (policy.mode != SandboxMode::danger_full_access) {
    const auto& support = sandbox::probe();  // cached after the first call
    req.sandbox = policy;
    if (!support.complete()) {
      if (cfg->sandbox_fallback != "unsandboxed-with-approval")
        return reply.error(rpc::kInternalError,
                           fmt::format("exec failed: the {} sandbox cannot be enforced here ({}) and "
                                       "sandbox_fallback is `refuse`",
                                       enum_name(policy.mode), support.summary));
      req.fallback_approved = true;  // the client's own request is the approval
    }
  }
  req.sandbox_cwd = req.cwd;
  req.allow_git_writes = cfg->allow_git_writes;
  req.llmx_home = cfg->llmx_home;
  req.timeout_ms = p.timeoutMs.value_or(api::kOneOffTimeoutMs);

  // Output is not streamed anywhere: the sink is empty. Not linked, so its end is not ours.
  auto exec = spawn_exec_sandbox(self, turn_executor_actor{});
  self->unlink_from(exec);
  auto timeout_ms = req.timeout_ms;
  self->request(exec, caf::infinite, std::move(req))
      .then(
          [=](ExecDone& done) {
            self->send_exit(exec, caf::exit_reason::user_shutdown);
            if (!done.spawn_error.empty())
              return reply.error(rpc::kInternalError, fmt::format("exec failed: {}", done.spawn_error));
            if (done.timed_out)
              return reply.error(rpc::kInternalError,
                                 fmt::format("exec failed: command timed out after {} ms", timeout_ms));
            if (done.killed) return reply.error(rpc::kInternalError, "exec failed: command was killed");
            reply(api::ExecOneOffCommandResult{done.exit_code, done.stdout_text, done.stderr_text});
          },
          [=](caf::error& err) {
            self->send_exit(exec, caf::exit_reason::user_shutdown);
            reply.error(rpc::kInternalError, fmt::format("exec failed: {}", self->system().render(err)));
          });
}

// Cancel flags of running searches by (session, cancellationToken): a new search with the same
// token cancels the earlier one.
struct SearchFlags {
  std::mutex mu;
  std::map<std::pair<caf::actor_id, std::string>, std::shared_ptr<std::atomic<bool>>> by_token;
};
SearchFlags& search_flags() {
  static auto* flags = new SearchFlags;  // never destroyed: detached searches may outlive main
  return *flags;
}

void fuzzy_file_search(session_ptr self, api::FuzzyFileSearchParams p, Reply<api::FuzzyFileSearchResult> reply) {
  if (text::trim_view(p.query).empty() || p.roots.empty()) return reply(api::FuzzyFileSearchResult{});
  auto flag = std::make_shared<std::atomic<bool>>(false);
  std::function<void()> after;
  if (p.cancellationToken) {
    auto key = std::make_pair(self->id(), *p.cancellationToken);
    auto& flags = search_flags();
    std::lock_guard lock(flags.mu);
    auto& slot = flags.by_token[key];
    if (slot) slot->store(true);
    slot = flag;
    after = [key, flag] {
      auto& flags = search_flags();
      std::lock_guard lock(flags.mu);
      auto it = flags.by_token.find(key);
      if (it != flags.by_token.end() && it->second == flag) flags.by_token.erase(it);
    };
  }
  auto query = std::move(p.query);
  auto roots = std::move(p.roots);
  offload(
      self, reply,
      [query, roots, flag]() -> api::FuzzyFileSearchResult {
        api::FuzzyFileSearchResult r;
        r.files = workspace::fuzzy_file_search(query, roots, flag.get());
        return r;
      },
      std::move(after));
}

}  // namespace

void bind_account_methods(Methods& t) {
  t.bind<api::GetConversationSummaryParams, api::GetConversationSummaryResult>("getConversationSummary",
                                                                               get_conversation_summary);
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
  t.bind<api::GitDiffToRemoteParams, api::GitDiffToRemoteResult>("gitDiffToRemote", git_diff_to_remote);
  t.bind<api::ExecOneOffCommandParams, api::ExecOneOffCommandResult>("execOneOffCommand", exec_one_off_command);
  t.bind<api::FuzzyFileSearchParams, api::FuzzyFileSearchResult>("fuzzyFileSearch", fuzzy_file_search);
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
