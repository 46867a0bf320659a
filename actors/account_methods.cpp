// Account, auth and utility methods of both servers (protocol.md §3.1-3.3, §3.6, §4.5-4.6;
// DECISIONS P1, P2): getUserSavedConfig, getUserAgent, userInfo, loginApiKey, loginChatGpt,
// cancelLoginChatGpt, logoutChatGpt, getAuthStatus, account/read, account/login/start,
// account/login/cancel, account/logout, account/rateLimits/read, feedback/upload,
// gitDiffToRemote, execOneOffCommand, fuzzyFileSearch.
//
// llmx authenticates with API keys only: ChatGPT login answers an error that says which key the
// configured provider uses. The session actor never blocks: commands run through an exec sandbox
// actor, and git and the file walk run in a detached actor each (protocol/account_api.hpp holds
// the plain code).
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>

#include "actors/exec_sandbox.hpp"
#include "actors/rollout_store.hpp"
#include "actors/session_state.hpp"
#include "protocol/account_api.hpp"
#include "protocol/auth.hpp"
#include "protocol/ids.hpp"
#include "protocol/log.hpp"
#include "protocol/text.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx::session_detail {

namespace {

namespace fs = std::filesystem;

// --- helpers ------------------------------------------------------------------------------------------

// Methods without params accept none, null or {} (protocol.md §1.6); anything else is -32602.
bool no_params(session_ptr self, const rpc::Incoming& in) {
  if (!in.params) return true;
  auto p = *in.params;
  if (p.is_object() && p.get_object().value_unsafe().size() == 0) return true;
  reply_error(self, in.id, rpc::kInvalidParams,
              fmt::format("Invalid params: `{}` takes no params, got {}", in.method, json::type_name(p)));
  return false;
}

std::optional<Config> config_or_error(session_ptr self, const rpc::Incoming& in) {
  try {
    return load_config(self->state.options.base_overrides);
  } catch (const std::exception& err) {
    reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("error deriving config: {}", err.what()));
    return std::nullopt;
  }
}

void notify(session_ptr self, std::string_view method, const std::string& params_json) {
  write(self, self->state.rpc.notification(method, params_json));
}

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

constexpr std::string_view kApiKeyDisabled =
    "API key login is disabled by `forced_login_method = \"chatgpt\"` in config.toml, and llmx does not support "
    "ChatGPT login";

// Stores the key; answers the error itself and returns nullopt on failure, else the auth method
// in effect afterwards.
std::optional<Nullable<std::string>> store_api_key(session_ptr self, const rpc::Incoming& in, const std::string& key) {
  if (text::trim_view(key).empty()) {
    reply_error(self, in.id, rpc::kInvalidParams, "Invalid params: `apiKey` must not be empty");
    return std::nullopt;
  }
  auto cfg = config_or_error(self, in);
  if (!cfg) return std::nullopt;
  if (cfg->forced_login_method == "chatgpt") {
    reply_error(self, in.id, rpc::kInvalidRequest, kApiKeyDisabled);
    return std::nullopt;
  }
  try {
    auth::save_api_key(cfg->llmx_home, key);
  } catch (const std::exception& err) {
    reply_error(self, in.id, rpc::kInternalError, fmt::format("failed to save api key: {}", err.what()));
    return std::nullopt;
  }
  cfg->provider.stored_api_key = text::trim(key);
  return Nullable<std::string>(auth_method(*cfg));
}

// Deletes auth.json; answers the error itself and returns nullopt on failure, else the auth
// method still in effect (an env_key variable survives a logout).
std::optional<Nullable<std::string>> remove_credentials(session_ptr self, const rpc::Incoming& in) {
  auto cfg = config_or_error(self, in);
  if (!cfg) return std::nullopt;
  try {
    auth::logout(cfg->llmx_home);
  } catch (const std::exception& err) {
    reply_error(self, in.id, rpc::kInternalError, fmt::format("logout failed: {}", err.what()));
    return std::nullopt;
  }
  cfg->provider.stored_api_key.reset();
  return Nullable<std::string>(auth_method(*cfg));
}

// Runs `work` in a detached actor (it may block) and answers the request with its outcome: code
// 0 and the result JSON, or an error code and message. `after` runs on the session afterwards.
using Outcome = std::pair<int32_t, std::string>;

void offload(session_ptr self, const rpc::Id& id, std::function<Outcome()> work, std::function<void()> after = {}) {
  auto worker = self->spawn<caf::detached>([work = std::move(work)](caf::event_based_actor* a) -> caf::behavior {
    return {[=](start_atom) {
      auto promise = a->make_response_promise();
      Outcome r;
      try {
        r = work();
      } catch (const std::exception& err) {
        r = {rpc::kInternalError, err.what()};
      }
      promise.deliver(r.first, std::move(r.second));
      a->quit();
    }};
  });
  self->request(worker, caf::infinite, start_atom::value)
      .then(
          [=](int32_t code, std::string& text) {
            if (after) after();
            if (code == 0) return reply(self, id, text);
            reply_error(self, id, code, text);
          },
          [=](caf::error& err) {
            if (after) after();
            reply_error(self, id, rpc::kInternalError, self->system().render(err));
          });
}

// --- settings and identity ---------------------------------------------------------------------------

void get_user_saved_config(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  api::GetUserSavedConfigResult r;
  try {
    r.config = api::load_user_saved_config(llmx_home());
  } catch (const api::SavedConfigError& err) {
    return reply_error(self, in.id, rpc::kInternalError,
                       fmt::format("failed to {} config.toml: {}", err.unreadable ? "load" : "parse", err.what()));
  } catch (const std::exception& err) {
    return reply_error(self, in.id, rpc::kInternalError, fmt::format("failed to load config.toml: {}", err.what()));
  }
  reply(self, in.id, json::to_json(r));
}

void get_user_agent(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  reply(self, in.id, json::to_json(api::GetUserAgentResult{user_agent(self->state.client_suffix)}));
}

void user_info(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  reply(self, in.id, json::to_json(api::UserInfoResult{}));
}

// --- v1 auth -------------------------------------------------------------------------------------------

void login_api_key(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::LoginApiKeyParams>(self, in);
  if (!p) return;
  auto method = store_api_key(self, in, p->apiKey);
  if (!method) return;
  reply(self, in.id, "{}");
  notify(self, "authStatusChange", json::to_json(api::AuthStatusChangeNotification{*method}));
}

void login_chatgpt(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  std::optional<Config> cfg;
  try {
    cfg = load_config(self->state.options.base_overrides);
  } catch (const std::exception&) {
  }
  reply_error(self, in.id, rpc::kInvalidRequest, chatgpt_login_error(cfg, "loginApiKey"));
}

void cancel_login_chatgpt(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::CancelLoginChatGptParams>(self, in);
  if (!p) return;
  if (!is_uuid(p->loginId))
    return reply_error(self, in.id, rpc::kInvalidParams,
                       fmt::format("Invalid params: `loginId` is not a UUID: {}", p->loginId));
  reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("login id not found: {}", p->loginId));
}

void logout_chatgpt(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  auto method = remove_credentials(self, in);
  if (!method) return;
  reply(self, in.id, "{}");
  notify(self, "authStatusChange", json::to_json(api::AuthStatusChangeNotification{*method}));
}

void get_auth_status(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::GetAuthStatusParams>(self, in);
  if (!p) return;
  auto cfg = config_or_error(self, in);
  if (!cfg) return;
  // refreshToken: API keys have nothing to refresh.
  api::GetAuthStatusResult r;
  r.authMethod = auth_method(*cfg);
  if (r.authMethod && p->includeToken.value_or(false)) r.authToken = resolve_bearer_token(cfg->provider).token;
  r.requiresOpenaiAuth = requires_openai_auth(*cfg);
  reply(self, in.id, json::to_json(r));
}

// --- v2 account -----------------------------------------------------------------------------------------

void account_read(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::AccountReadParams>(self, in);
  if (!p) return;
  auto cfg = config_or_error(self, in);
  if (!cfg) return;
  api::AccountReadResult r;
  if (auth_method(*cfg)) r.account = api::Account{};
  r.requiresOpenaiAuth = requires_openai_auth(*cfg);
  reply(self, in.id, json::to_json(r));
}

void account_login_start(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::LoginStartParams>(self, in);
  if (!p) return;
  if (p->is<api::LoginStartChatGpt>()) {
    std::optional<Config> cfg;
    try {
      cfg = load_config(self->state.options.base_overrides);
    } catch (const std::exception&) {
    }
    return reply_error(self, in.id, rpc::kInvalidRequest,
                       chatgpt_login_error(cfg, "account/login/start {\"type\":\"apiKey\"}"));
  }
  auto method = store_api_key(self, in, p->get_if<api::LoginStartApiKey>()->apiKey);
  if (!method) return;
  reply(self, in.id, json::to_json(api::LoginStartApiKeyResult{}));
  notify(self, "account/login/completed", json::to_json(api::LoginCompletedNotification{std::nullopt, true, std::nullopt}));
  notify(self, "account/updated", json::to_json(api::AccountUpdatedNotification{*method}));
}

void account_login_cancel(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::LoginCancelParams>(self, in);
  if (!p) return;
  if (!is_uuid(p->loginId))
    return reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("invalid login id: {}", p->loginId));
  reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("login id not found: {}", p->loginId));
}

void account_logout(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  auto method = remove_credentials(self, in);
  if (!method) return;
  reply(self, in.id, "{}");
  notify(self, "account/updated", json::to_json(api::AccountUpdatedNotification{*method}));
}

void account_rate_limits_read(session_ptr self, const rpc::Incoming& in) {
  if (!no_params(self, in)) return;
  const auto& last = self->state.last_rate_limits;
  if (!last)
    return reply_error(self, in.id, rpc::kInvalidRequest,
                       "no rate-limit information yet: the provider has not sent rate-limit headers");
  reply(self, in.id, json::to_json(api::RateLimitsResult{api::to_v2(*last)}));
}

void feedback_upload(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::FeedbackUploadParams>(self, in);
  if (!p) return;
  if (p->conversationId && !is_uuid(*p->conversationId))
    return reply_error(self, in.id, rpc::kInvalidParams,
                       fmt::format("Invalid params: `conversationId` is not a UUID: {}", *p->conversationId));
  try {
    api::append_feedback(llmx_home(), api::feedback_line(*p, std::chrono::system_clock::now()));
  } catch (const std::exception& err) {
    return reply_error(self, in.id, rpc::kInternalError, fmt::format("failed to upload feedback: {}", err.what()));
  }
  reply(self, in.id, json::to_json(api::FeedbackUploadResult{p->conversationId.value_or("")}));
}

// --- git, commands, files ------------------------------------------------------------------------------

void git_diff_to_remote(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::GitDiffToRemoteParams>(self, in);
  if (!p) return;
  auto cwd = p->cwd;
  offload(self, in.id, [cwd]() -> Outcome {
    auto r = api::git_diff_to_remote(cwd);
    if (!r)
      return {rpc::kInvalidRequest, fmt::format("failed to compute git diff to remote for cwd: {}", json::to_json(cwd))};
    return {0, json::to_json(*r)};
  });
}

void exec_one_off_command(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::ExecOneOffCommandParams>(self, in);
  if (!p) return;
  if (p->command.empty()) return reply_error(self, in.id, rpc::kInvalidRequest, "command must not be empty");
  if (p->timeoutMs && *p->timeoutMs <= 0)
    return reply_error(self, in.id, rpc::kInvalidParams,
                       fmt::format("Invalid params: `timeoutMs` must be a positive number of milliseconds, got {}",
                                   *p->timeoutMs));
  auto cfg = config_or_error(self, in);
  if (!cfg) return;
  SandboxPolicy policy = p->sandboxPolicy.value_or(cfg->sandbox_policy);
  fs::path cwd = p->cwd ? fs::path(*p->cwd) : fs::path(cfg->cwd);
  if (cwd.is_relative()) cwd = fs::path(cfg->cwd) / cwd;

  ExecRequest req;
  req.call_id = "one-off-" + new_uuid_v4();
  req.argv = p->command;
  req.cwd = cwd.lexically_normal().string();
  const auto& ep = cfg->shell_environment_policy;
  sandbox::ShellEnvironmentPolicy env_policy{ep.inherit, ep.ignore_default_excludes, ep.exclude, ep.set, ep.include_only};
  req.env = sandbox::build_child_env(env_policy, sandbox::current_process_env(), !policy.has_network());
  if (policy.mode != SandboxMode::danger_full_access) {
    const auto& support = sandbox::probe();  // cached after the first call
    req.sandbox = policy;
    if (!support.complete()) {
      if (cfg->sandbox_fallback != "unsandboxed-with-approval")
        return reply_error(self, in.id, rpc::kInternalError,
                           fmt::format("exec failed: the {} sandbox cannot be enforced here ({}) and "
                                       "sandbox_fallback is `refuse`",
                                       enum_name(policy.mode), support.summary));
      req.fallback_approved = true;  // the client's own request is the approval
    }
  }
  req.sandbox_cwd = req.cwd;
  req.allow_git_writes = cfg->allow_git_writes;
  req.llmx_home = cfg->llmx_home;
  req.timeout_ms = p->timeoutMs.value_or(api::kOneOffTimeoutMs);

  // Output is not streamed anywhere: the sink is empty. Not linked, so its end is not ours.
  auto exec = spawn_exec_sandbox(self, turn_executor_actor{});
  self->unlink_from(exec);
  auto id = in.id;
  auto timeout_ms = req.timeout_ms;
  self->request(exec, caf::infinite, std::move(req))
      .then(
          [=](ExecDone& done) {
            self->send_exit(exec, caf::exit_reason::user_shutdown);
            if (!done.spawn_error.empty())
              return reply_error(self, id, rpc::kInternalError, fmt::format("exec failed: {}", done.spawn_error));
            if (done.timed_out)
              return reply_error(self, id, rpc::kInternalError,
                                 fmt::format("exec failed: command timed out after {} ms", timeout_ms));
            if (done.killed) return reply_error(self, id, rpc::kInternalError, "exec failed: command was killed");
            reply(self, id, json::to_json(api::ExecOneOffCommandResult{done.exit_code, done.stdout_text, done.stderr_text}));
          },
          [=](caf::error& err) {
            self->send_exit(exec, caf::exit_reason::user_shutdown);
            reply_error(self, id, rpc::kInternalError, fmt::format("exec failed: {}", self->system().render(err)));
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

void fuzzy_file_search(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::FuzzyFileSearchParams>(self, in);
  if (!p) return;
  if (text::trim_view(p->query).empty() || p->roots.empty())
    return reply(self, in.id, json::to_json(api::FuzzyFileSearchResult{}));
  auto flag = std::make_shared<std::atomic<bool>>(false);
  std::function<void()> after;
  if (p->cancellationToken) {
    auto key = std::make_pair(self->id(), *p->cancellationToken);
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
  auto query = p->query;
  auto roots = p->roots;
  offload(
      self, in.id,
      [query, roots, flag]() -> Outcome {
        api::FuzzyFileSearchResult r;
        r.files = api::fuzzy_file_search(query, roots, flag.get());
        return {0, json::to_json(r)};
      },
      std::move(after));
}

}  // namespace

void get_conversation_summary(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::GetConversationSummaryParams>(self, in);
  if (!p) return;
  auto cfg = config_or_error(self, in);
  if (!cfg) return;
  api::SummaryTarget target;
  try {
    target = api::summary_target(*p, cfg->llmx_home);
  } catch (const std::invalid_argument& err) {
    return reply_error(self, in.id, rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what()));
  }
  if (target.bad_id)
    return reply_error(self, in.id, rpc::kInvalidRequest,
                       fmt::format("no rollout found for conversation id {}", target.id.value_or("")));
  auto id = in.id;
  auto provider = cfg->provider.id;
  auto where = target.path.value_or(target.id.value_or(""));
  self->request(self->state.store, caf::infinite, summary_atom::value, ThreadRef{cfg->llmx_home, target.id, target.path})
      .then(
          [=](ThreadSummaryReply& r) {
            reply(self, id, json::to_json(api::GetConversationSummaryResult{api::summary_from(r.summary, provider)}));
          },
          [=](caf::error& err) {
            if (is_request_error(err)) return reply_error(self, id, rpc::kInvalidRequest, error_text(err));
            reply_error(self, id, rpc::kInternalError,
                        fmt::format("failed to load conversation summary from {}: {}", where, error_text(err)));
          });
}

bool handle_account_method(session_ptr self, const rpc::Incoming& in) {
  const auto& m = in.method;
  if (m == "getConversationSummary") return get_conversation_summary(self, in), true;
  if (m == "getUserSavedConfig") return get_user_saved_config(self, in), true;
  if (m == "getUserAgent") return get_user_agent(self, in), true;
  if (m == "userInfo") return user_info(self, in), true;
  if (m == "loginApiKey") return login_api_key(self, in), true;
  if (m == "loginChatGpt") return login_chatgpt(self, in), true;
  if (m == "cancelLoginChatGpt") return cancel_login_chatgpt(self, in), true;
  if (m == "logoutChatGpt") return logout_chatgpt(self, in), true;
  if (m == "getAuthStatus") return get_auth_status(self, in), true;
  if (m == "account/read") return account_read(self, in), true;
  if (m == "account/login/start") return account_login_start(self, in), true;
  if (m == "account/login/cancel") return account_login_cancel(self, in), true;
  if (m == "account/logout") return account_logout(self, in), true;
  if (m == "account/rateLimits/read") return account_rate_limits_read(self, in), true;
  if (m == "feedback/upload") return feedback_upload(self, in), true;
  if (m == "gitDiffToRemote") return git_diff_to_remote(self, in), true;
  if (m == "execOneOffCommand") return exec_one_off_command(self, in), true;
  if (m == "fuzzyFileSearch") return fuzzy_file_search(self, in), true;
  return false;
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
