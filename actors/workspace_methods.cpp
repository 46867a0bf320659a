// The workspace methods of both servers (protocol.md §3.6, DECISIONS P1): gitDiffToRemote,
// execOneOffCommand and fuzzyFileSearch, bound by bind_workspace_methods. The session never
// blocks: the command runs through an exec sandbox actor, git and the file walk in a detached
// actor each (the plain code is in protocol/workspace/).
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <variant>

#include "actors/exec_sandbox.hpp"
#include "actors/session_state.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/text.hpp"
#include "protocol/rpc/workspace_api.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/run_command.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx::session_detail {

namespace {

namespace fs = std::filesystem;

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
  req.env = sandbox::child_env(cfg->shell_environment_policy, !policy.has_network());
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

void bind_workspace_methods(Methods& t) {
  t.bind<api::GitDiffToRemoteParams, api::GitDiffToRemoteResult>("gitDiffToRemote", git_diff_to_remote);
  t.bind<api::ExecOneOffCommandParams, api::ExecOneOffCommandResult>("execOneOffCommand", exec_one_off_command);
  t.bind<api::FuzzyFileSearchParams, api::FuzzyFileSearchResult>("fuzzyFileSearch", fuzzy_file_search);
}

}  // namespace llmx::session_detail
