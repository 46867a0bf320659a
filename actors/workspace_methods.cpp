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
#include "protocol/base/base64.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/text.hpp"
#include "protocol/rpc/v2_api.hpp"
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

// A command the client runs itself (execOneOffCommand, command/exec): its cwd against the
// configured one, under the given or configured policy. The client's own request is the approval
// when the sandbox cannot be enforced and sandbox_fallback allows running without it; otherwise
// the RpcError to answer.
std::variant<ExecRequest, RpcError> one_off_request(const Config& cfg, std::vector<std::string> argv,
                                                    const std::optional<std::string>& cwd_param,
                                                    const std::optional<SandboxPolicy>& policy_param) {
  SandboxPolicy policy = policy_param.value_or(cfg.sandbox_policy);
  fs::path cwd = cwd_param ? fs::path(*cwd_param) : fs::path(cfg.cwd);
  if (cwd.is_relative()) cwd = fs::path(cfg.cwd) / cwd;
  ExecRequest req;
  req.call_id = "one-off-" + new_uuid_v4();
  req.argv = std::move(argv);
  req.cwd = cwd.lexically_normal().string();
  req.env = sandbox::child_env(cfg.shell_environment_policy, !policy.has_network());
  if (policy.mode != SandboxMode::danger_full_access) {
    const auto& support = sandbox::probe();  // cached after the first call
    req.sandbox = policy;
    if (!support.complete()) {
      if (cfg.sandbox_fallback != "unsandboxed-with-approval")
        return RpcError{rpc::kInternalError, fmt::format("exec failed: the {} sandbox cannot be enforced here ({}) and "
                                                         "sandbox_fallback is `refuse`",
                                                         enum_name(policy.mode), support.summary)};
      req.fallback_approved = true;
    }
  }
  req.sandbox_cwd = req.cwd;
  req.allow_git_writes = cfg.allow_git_writes;
  req.llmx_home = cfg.llmx_home;
  return req;
}

void exec_one_off_command(session_ptr self, api::ExecOneOffCommandParams p, Reply<api::ExecOneOffCommandResult> reply) {
  if (p.command.empty()) return reply.error(rpc::kInvalidRequest, "command must not be empty");
  if (p.timeoutMs && *p.timeoutMs <= 0)
    return reply.error(rpc::kInvalidParams,
                       fmt::format("Invalid params: `timeoutMs` must be a positive number of milliseconds, got {}",
                                   *p.timeoutMs));
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  auto made = one_off_request(*cfg, std::move(p.command), p.cwd, p.sandboxPolicy);
  if (auto* err = std::get_if<RpcError>(&made)) return reply(*err);
  auto req = std::get<ExecRequest>(std::move(made));
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

// --- v2 command/exec ------------------------------------------------------------------------------

constexpr int64_t kCommandExecOutputCap = 1 << 20;  // bytes per stream kept or streamed by default
constexpr int64_t kUncappedOutput = int64_t{256} << 20;  // disableOutputCap: what one answer may carry

// Streams a command's output as command/exec/outputDelta, straight to the session's writer (up
// to `cap` bytes per stream). Asked `flush_atom` after the command ended, it answers once every
// chunk sent before the end is written, so the result follows the last delta.
turn_executor_actor spawn_output_streamer(session_ptr self, std::string process_id, int64_t cap) {
  auto writer = self->state.writer;
  auto rpc = self->state.rpc;
  auto streamer = self->spawn([=](caf::event_based_actor* a) -> caf::behavior {
    auto sent = std::make_shared<std::array<int64_t, 2>>();
    return {
        [=](ExecOutput& o) {
          auto& n = (*sent)[o.is_stderr ? 1 : 0];
          if (n >= cap) return;
          auto take = std::min<int64_t>(static_cast<int64_t>(o.bytes.size()), cap - n);
          n += take;
          v2::CommandExecOutputDelta d{process_id, o.is_stderr ? "stderr" : "stdout",
                                       base64::encode(std::string_view(o.bytes).substr(0, static_cast<size_t>(take))),
                                       n >= cap};
          a->send(writer, line_atom::value, rpc.notification("command/exec/outputDelta", json::to_json(d)));
        },
        [=](flush_atom) {
          a->quit();
          return true;
        },
    };
  });
  return caf::actor_cast<turn_executor_actor>(streamer);
}

void command_exec(session_ptr self, v2::CommandExecParams p, Reply<v2::CommandExecResult> reply) {
  if (p.command.empty()) return reply.error(rpc::kInvalidRequest, "command must not be empty");
  if (p.streamStdoutStderr && !p.processId)
    return reply.error(rpc::kInvalidRequest, "command/exec streaming requires a client-supplied processId");
  if (p.processId && self->state.command_execs.count(*p.processId))
    return reply.error(rpc::kInvalidRequest, fmt::format("duplicate active command/exec process id: {}", *p.processId));
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  auto made = one_off_request(*cfg, std::move(p.command), p.cwd, p.sandboxPolicy);
  if (auto* err = std::get_if<RpcError>(&made)) return reply(*err);
  auto req = std::get<ExecRequest>(std::move(made));
  req.timeout_ms = p.disableTimeout                    ? int64_t{365} * 24 * 3600 * 1000
                   : p.timeoutMs && *p.timeoutMs > 0 ? *p.timeoutMs
                                                     : api::kOneOffTimeoutMs;
  if (p.env)
    for (const auto& [name, value] : *p.env) {
      if (value)
        req.env[name] = *value;
      else
        req.env.erase(name);
    }
  const int64_t cap = p.disableOutputCap ? kUncappedOutput
                                         : std::clamp<int64_t>(p.outputBytesCap.value_or(kCommandExecOutputCap), 0,
                                                               kUncappedOutput);
  // The capture keeps the first half of its budget whole: twice the cap keeps the first `cap`
  // bytes of each stream, cut there and not spliced from head and tail.
  req.max_capture_bytes = static_cast<uint64_t>(cap) * 2 + 2;
  std::optional<turn_executor_actor> streamer;
  if (p.streamStdoutStderr) streamer = spawn_output_streamer(self, *p.processId, cap);
  auto exec = spawn_exec_sandbox(self, streamer ? *streamer : turn_executor_actor{});
  self->unlink_from(exec);  // it ends by send_exit below; that is not the session's end
  auto process_id = p.processId;
  if (process_id) self->state.command_execs.emplace(*process_id, exec);
  auto finish = [=](ExecDone done) {
    self->send_exit(exec, caf::exit_reason::user_shutdown);
    if (process_id) self->state.command_execs.erase(*process_id);
    if (!done.spawn_error.empty())
      return reply.error(rpc::kInternalError, fmt::format("failed to spawn command: {}", done.spawn_error));
    v2::CommandExecResult r;
    r.exitCode = done.timed_out ? 124 : done.signal ? 128 + done.signal : done.exit_code;
    if (!streamer) {  // streamed output is not repeated
      auto capped = [&](std::string& s) {
        if (static_cast<int64_t>(s.size()) > cap) s.resize(static_cast<size_t>(cap));
        return std::move(s);
      };
      r.out = capped(done.stdout_text);
      r.err = capped(done.stderr_text);
    }
    reply(r);
  };
  self->request(exec, caf::infinite, std::move(req))
      .then(
          [=](ExecDone& done) {
            if (!streamer) return finish(std::move(done));
            self->request(caf::actor_cast<caf::actor>(*streamer), std::chrono::seconds(10), flush_atom::value)
                .then([=](bool) { finish(done); }, [=](caf::error&) { finish(done); });
          },
          [=](caf::error& err) {
            self->send_exit(exec, caf::exit_reason::user_shutdown);
            if (process_id) self->state.command_execs.erase(*process_id);
            reply.error(rpc::kInternalError, fmt::format("exec failed: {}", self->system().render(err)));
          });
}

void command_exec_terminate(session_ptr self, v2::CommandExecTerminateParams p, Reply<Empty> reply) {
  auto it = self->state.command_execs.find(p.processId);
  if (it == self->state.command_execs.end())
    return reply.error(rpc::kInvalidRequest,
                       fmt::format("no active command/exec for process id {}", json::to_json(p.processId)));
  self->send(it->second, cancel_atom::value);  // killed; its command/exec answers with the signal's code
  reply(Empty{});
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

void bind_command_exec_methods(Methods& t) {
  t.bind<v2::CommandExecParams, v2::CommandExecResult>("command/exec", command_exec);
  t.bind<v2::CommandExecTerminateParams, Empty>("command/exec/terminate", command_exec_terminate);
}

void bind_workspace_methods(Methods& t) {
  t.bind<api::GitDiffToRemoteParams, api::GitDiffToRemoteResult>("gitDiffToRemote", git_diff_to_remote);
  t.bind<api::ExecOneOffCommandParams, api::ExecOneOffCommandResult>("execOneOffCommand", exec_one_off_command);
  t.bind<api::FuzzyFileSearchParams, api::FuzzyFileSearchResult>("fuzzyFileSearch", fuzzy_file_search);
}

}  // namespace llmx::session_detail
