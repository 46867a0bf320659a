#include "actors/tool_flow.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "protocol/base/json_writer.hpp"  // sanitize_utf8
#include "protocol/model/tool_output.hpp"
#include "protocol/workspace/file_tools.hpp"
#include "protocol/model/tools.hpp"
#include "sandbox/approval.hpp"
#include "sandbox/parse_command.hpp"
#include "sandbox/process.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kRejected = "exec command rejected by user";

std::string resolved(const std::string& base, const std::string& path) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  return p.lexically_normal().string();
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  auto c = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : c.string();
}

std::string with_note(std::string_view text, const std::string& note) {
  return note.empty() ? std::string(text) : fmt::format("{} ({})", text, note);
}

bool approved(ReviewDecision d) { return d == ReviewDecision::approved || d == ReviewDecision::approved_for_session; }

}  // namespace

bool patch_paths_writable(const patch::Patch& p, const std::string& cwd, const SandboxPolicy& sandbox) {
  if (sandbox.mode == SandboxMode::danger_full_access) return true;
  if (sandbox.mode == SandboxMode::read_only) return false;
  // Resolve symlinks on both sides, then reuse the lexical check on the resolved paths.
  patch::Patch resolved_patch = p;
  for (auto& h : resolved_patch.hunks) {
    h.path = canonical(resolved(cwd, h.path));
    if (h.move_path) h.move_path = canonical(resolved(cwd, *h.move_path));
  }
  std::vector<std::string> roots;
  for (const auto& r : sandbox::writable_roots(sandbox, cwd)) roots.push_back(canonical(r));
  return patch::all_paths_writable(resolved_patch, canonical(cwd), roots);
}

// Deletes what a patch applied through the client removes (ACP has no delete); a failure turns
// the outcome into that error.
static void remove_files(const std::vector<std::string>& paths, patch::ApplyResult& result) {
  for (const auto& path : paths)
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      result = patch::ApplyResult{1, "", "Failed to delete file " + path + ": " + std::strerror(errno) + "\n"};
      return;
    }
}

ToolFlow::ToolFlow(FunctionCallItem call, const ToolContext& ctx, patch::TurnDiffTracker& diffs)
    : call_(std::move(call)), ctx_(ctx), diffs_(diffs) {}

ToolFlow::Step ToolFlow::start(std::vector<EventMsg>& events) {
  const auto& name = call_.name;
  if (ctx_.mcp)
    if (auto* target = ctx_.mcp->find(name)) return start_mcp(*target, events);
  if (std::find(ctx_.file_tools.begin(), ctx_.file_tools.end(), name) != ctx_.file_tools.end())
    return start_file_tool(events);
  if (name == "shell" || name == "container.exec" || name == "local_shell") return start_shell(events);
  if (name == "apply_patch") {
    tools::ApplyPatchArgs args;
    if (auto r = tools::parse_apply_patch_args(call_.arguments, args); r.error) return Done{*r.error, false};
    auto parsed = patch::parse(args.input);
    if (auto* err = std::get_if<patch::ParseError>(&parsed))
      return Done{"apply_patch verification failed: " + err->display(), false};
    return start_patch(std::get<patch::Patch>(parsed), ctx_.cwd, events);
  }
  if (name == "update_plan") {
    tools::UpdatePlanArgs args;
    if (auto r = tools::parse_update_plan_args(call_.arguments, args); r.error) return Done{*r.error, false};
    events.push_back(PlanUpdateEvent{args.explanation, args.plan});
    return Done{"Plan updated", true};
  }
  return Done{"unsupported call: " + name, false};
}

ToolFlow::Step ToolFlow::start_shell(std::vector<EventMsg>& events) {
  tools::ShellArgs args;
  if (auto r = tools::parse_shell_args(call_.arguments, args); r.error) return Done{*r.error, false};
  argv_ = args.command;
  workdir_ = args.workdir ? resolved(ctx_.cwd, *args.workdir) : ctx_.cwd;
  timeout_ms_ = args.timeout_ms.value_or(ctx_.default_timeout_ms);
  escalated_ = args.with_escalated_permissions.value_or(false);
  justification_ = args.justification;

  auto intercepted = patch::intercept_shell(argv_, workdir_);
  if (intercepted.kind == patch::Intercept::Kind::error) return Done{intercepted.error, false};
  if (intercepted.kind == patch::Intercept::Kind::patch) return start_patch(intercepted.patch, intercepted.cwd, events);

  if (escalated_ && ctx_.approval != AskForApproval::on_request)
    return Done{sandbox::escalation_rejected_message(ctx_.approval), false};
  auto requirement = sandbox::shell_initial_approval(ctx_.approval, ctx_.sandbox, argv_, escalated_);
  using K = sandbox::ExecApprovalRequirement::Kind;
  if (ctx_.sandbox.mode != SandboxMode::danger_full_access && !escalated_ && !ctx_.sandbox_available) {
    if (!ctx_.fallback_with_approval)
      return Done{fmt::format("command not run: the {} sandbox is not available on this machine ({}), and "
                              "sandbox_fallback is `refuse`",
                              enum_name(ctx_.sandbox.mode), ctx_.sandbox_summary),
                  false};
    unsandboxed_fallback_ = true;
    if (requirement.kind == K::skip) requirement = sandbox::ExecApprovalRequirement::needs_approval();
  }
  if (requirement.kind == K::forbidden) return Done{requirement.reason, false};
  if (requirement.kind == K::needs_approval) {
    if (!ctx_.can_ask) return refuse("command", events);
    phase_ = Phase::initial_approval;
    auto reason = unsandboxed_fallback_ ? std::optional<std::string>("no sandbox is available on this machine; run "
                                                                     "this command without one?")
                                        : justification_;
    ExecApprovalRequestEvent ev{call_.call_id, argv_, workdir_, reason, std::nullopt, sandbox::parse_command(argv_)};
    return Ask{ApprovalRequest{call_.call_id, ctx_.sub_id, std::move(ev), shell_key()}};
  }
  phase_ = Phase::first_run;
  return run(!escalated_ && ctx_.sandbox.mode != SandboxMode::danger_full_access, events);
}

ApprovalKey ToolFlow::shell_key() const {
  ApprovalKey key;
  key.command = argv_;
  key.cwd = workdir_;
  key.escalated = escalated_;
  return key;
}

ToolFlow::Step ToolFlow::run(bool sandboxed, std::vector<EventMsg>& events) {
  ExecRequest req;
  req.call_id = call_.call_id;
  req.argv = argv_;
  req.cwd = workdir_;
  req.env = ctx_.base_env;
  if (!ctx_.sandbox.has_network()) req.env["LLMX_SANDBOX_NETWORK_DISABLED"] = "1";
  // After an approved fallback the command still gets every layer this machine has (Landlock,
  // seccomp, capabilities, a cgroup); it is only not counted as sandboxed.
  if (sandboxed) req.sandbox = ctx_.sandbox;
  req.fallback_approved = unsandboxed_fallback_;
  req.allow_git_writes = ctx_.allow_git_writes;
  req.llmx_home = ctx_.llmx_home;
  req.sandbox_cwd = ctx_.cwd;
  req.timeout_ms = timeout_ms_;
  events.push_back(ExecCommandBeginEvent{call_.call_id, argv_, workdir_, sandbox::parse_command(argv_), false});
  return Run{std::move(req)};
}

ToolFlow::Step ToolFlow::on_exec(const ExecDone& done, std::vector<EventMsg>& events) {
  if (phase_ == Phase::grep_run) {
    phase_ = Phase::done;
    if (!done.spawn_error.empty()) return Done{"grep_files failed: " + done.spawn_error, false};
    if (done.timed_out) return Done{"grep_files timed out after 30 seconds", false};
    auto out = file_tools::grep_output(static_cast<int>(done.exit_code), done.stdout_text, done.stderr_text, grep_limit_);
    return Done{truncate_for_model(out.text), out.success};
  }
  if (phase_ == Phase::first_run && !done.killed && !done.timed_out && done.spawn_error.empty() &&
      ctx_.sandbox.mode != SandboxMode::danger_full_access && !escalated_ && !unsandboxed_fallback_) {
    const sandbox::DenialFacts facts{static_cast<int>(done.exit_code), done.timed_out, done.stdout_text,
                                     done.stderr_text, done.aggregated, {}};
    if (sandbox::is_sandbox_denial(facts, true)) {
      auto action = sandbox::on_sandbox_denial(ctx_.approval, already_approved_);
      if (action == sandbox::DenialAction::retry_unsandboxed) {
        finish_exec(done, events);
        phase_ = Phase::retry_run;
        return run(false, events);
      }
      if (action == sandbox::DenialAction::ask_then_retry_unsandboxed && ctx_.can_ask) {
        finish_exec(done, events);
        phase_ = Phase::retry_approval;
        ExecApprovalRequestEvent ev{call_.call_id, argv_, workdir_,
                                    std::string(sandbox::kRetryWithoutSandboxReason), std::nullopt,
                                    sandbox::parse_command(argv_)};
        return Ask{ApprovalRequest{call_.call_id, ctx_.sub_id, std::move(ev), shell_key()}};
      }
    }
  }
  phase_ = Phase::done;
  return finish_exec(done, events);
}

ToolFlow::Step ToolFlow::finish_exec(const ExecDone& done, std::vector<EventMsg>& events) {
  ExecCommandEndEvent end;
  end.call_id = call_.call_id;
  end.duration = Duration::from_nanos(done.duration_ns);
  if (!done.spawn_error.empty() || done.killed) {
    std::string message = done.killed ? fmt::format("Wall time: {:.1f} seconds\naborted by user", done.duration_ns / 1e9)
                                      : "execution error: " + done.spawn_error;
    end.stderr_text = end.aggregated_output = end.formatted_output = message;
    end.exit_code = -1;
    events.push_back(std::move(end));
    return Done{message, false};
  }
  end.stdout_text = json::sanitize_utf8(done.stdout_text);
  end.stderr_text = json::sanitize_utf8(done.stderr_text);
  end.aggregated_output = json::sanitize_utf8(done.aggregated);
  end.exit_code = done.exit_code;
  end.formatted_output = format_exec_output(end.aggregated_output, static_cast<int>(done.exit_code),
                                            done.duration_ns / 1e9, done.timed_out, timeout_ms_);
  auto output = end.formatted_output;
  bool success = done.exit_code == 0 && !done.timed_out;
  events.push_back(std::move(end));
  return Done{std::move(output), success};
}

ToolFlow::Step ToolFlow::on_approval(const ApprovalReply& reply, std::vector<EventMsg>& events) {
  if (reply.decision == ReviewDecision::abort) aborted_ = true;
  switch (phase_) {
    case Phase::initial_approval:
      if (!approved(reply.decision)) return Done{with_note(kRejected, reply.note), false};
      already_approved_ = true;
      phase_ = Phase::first_run;
      return run(!escalated_ && ctx_.sandbox.mode != SandboxMode::danger_full_access, events);
    case Phase::retry_approval:
      if (!approved(reply.decision)) return Done{with_note(kRejected, reply.note), false};
      phase_ = Phase::retry_run;
      return run(false, events);
    case Phase::patch_approval:
      if (!approved(reply.decision)) return Done{with_note(sandbox::kPatchRejectedByUser, reply.note), false};
      return apply_patch_now(true, events);
    case Phase::mcp_approval:
      if (!approved(reply.decision)) return Done{with_note("MCP tool call rejected by user", reply.note), false};
      return call_mcp(events);
    default:
      return Done{"internal error: unexpected approval", false};
  }
}

ToolFlow::Step ToolFlow::start_patch(const patch::Patch& p, const std::string& cwd, std::vector<EventMsg>& events) {
  if (ctx_.files_through_client) {  // the editor's buffers are the files: read them first
    pending_patch_.emplace(p, cwd);
    phase_ = Phase::patch_read;
    FileIo io;
    io.reads = patch::files_read(p, cwd);
    if (io.reads.empty()) return on_files(FileIoDone{}, events);
    return Files{std::move(io)};
  }
  return decide_patch(patch::verify(p, cwd), events);
}

// The patch checked against the files: rejected, asked about, or applied.
ToolFlow::Step ToolFlow::decide_patch(patch::Result<patch::Verified> verified, std::vector<EventMsg>& events) {
  phase_ = Phase::done;
  if (!verified) return Done{verified.error, false};  // already "apply_patch verification failed: ..."
  patch_ = std::move(*verified);
  const auto& p = patch_->patch;
  bool writable = patch_paths_writable(p, patch_->cwd, ctx_.sandbox);
  auto safety = sandbox::assess_patch_safety(ctx_.approval, ctx_.sandbox, p.hunks.empty(), writable,
                                             ctx_.sandbox_available);
  using K = sandbox::PatchSafety::Kind;
  if (safety.kind == K::reject) return Done{safety.reason, false};
  if (safety.kind == K::ask_user) {
    if (!ctx_.can_ask) return refuse("patch", events);
    phase_ = Phase::patch_approval;
    ApplyPatchApprovalRequestEvent ev{call_.call_id, patch_->changes, std::nullopt, std::nullopt};
    ApprovalKey key;
    key.is_patch = true;
    for (const auto& [path, change] : patch_->changes) {
      key.files.push_back(path);
      if (auto* u = change.get_if<FileUpdate>(); u && u->move_path) key.files.push_back(*u->move_path);
    }
    return Ask{ApprovalRequest{call_.call_id, ctx_.sub_id, std::move(ev), std::move(key)}};
  }
  return apply_patch_now(false, events);
}

ToolFlow::Step ToolFlow::apply_patch_now(bool user_approved, std::vector<EventMsg>& events) {
  phase_ = Phase::done;
  events.push_back(PatchApplyBeginEvent{call_.call_id, !user_approved, patch_->changes});
  diffs_.on_patch_begin(patch_->changes);
  patch_started_ = std::chrono::steady_clock::now();
  if (!ctx_.files_through_client) return patch_applied(patch::apply(patch_->patch, patch_->cwd), events);
  // Applied to the snapshot the client read; later hunks see what earlier ones wrote or removed.
  FileIo writes;
  patch::FileAccess files;
  files.read = [&](const std::string& path) {
    if (auto w = writes.writes.find(path); w != writes.writes.end()) return patch::Result<std::string>::ok(w->second);
    if (std::find(patch_removals_.begin(), patch_removals_.end(), path) != patch_removals_.end())
      return patch::Result<std::string>::fail("it was deleted by this patch");
    if (auto it = snapshot_.find(path); it != snapshot_.end()) return patch::Result<std::string>::ok(it->second);
    return patch::Result<std::string>::fail("the client did not read it");
  };
  files.write = [&](const std::string& path, const std::string& content) -> std::optional<std::string> {
    std::erase(patch_removals_, path);
    writes.writes[path] = content;
    return std::nullopt;
  };
  files.remove = [&](const std::string& path) -> std::optional<std::string> {
    writes.writes.erase(path);
    patch_removals_.push_back(path);
    return std::nullopt;
  };
  auto result = patch::apply(patch_->patch, patch_->cwd, files);
  if (result.exit_code != 0) return patch_applied(result, events);
  if (writes.writes.empty()) {  // deletions only
    remove_files(patch_removals_, result);
    return patch_applied(result, events);
  }
  phase_ = Phase::patch_write;
  patch_result_ = std::move(result);
  return Files{std::move(writes)};
}

// The client's answer: the texts a patch reads (then it is verified against them), or how the
// writes went (then deletions happen here and the outcome is reported).
ToolFlow::Step ToolFlow::on_files(const FileIoDone& done, std::vector<EventMsg>& events) {
  auto failure = [&](const std::string& path) -> std::string {
    auto err = done.errors.find(path);
    if (err == done.errors.end()) err = done.errors.find("*");
    return err != done.errors.end() ? err->second : "the client did not read it";
  };
  if (phase_ == Phase::patch_read && pending_patch_) {
    snapshot_ = done.texts;
    auto [p, cwd] = std::move(*pending_patch_);
    pending_patch_.reset();
    auto verified = patch::verify(p, cwd, [&](const std::string& path) {
      if (auto it = snapshot_.find(path); it != snapshot_.end()) return patch::Result<std::string>::ok(it->second);
      return patch::Result<std::string>::fail(failure(path));
    });
    return decide_patch(std::move(verified), events);
  }
  if (phase_ != Phase::patch_write) return Done{"internal error: unexpected file answer", false};
  phase_ = Phase::done;
  auto result = std::move(*patch_result_);
  if (!done.errors.empty()) {
    const auto& [path, err] = *done.errors.begin();
    result = patch::ApplyResult{1, "", (path == "*" ? "Failed to write the patched files: " + err
                                                    : "Failed to write file " + path + ": " + err) +
                                           "\n"};
  } else {
    remove_files(patch_removals_, result);
  }
  return patch_applied(result, events);
}

ToolFlow::Step ToolFlow::patch_applied(const patch::ApplyResult& result, std::vector<EventMsg>& events) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - patch_started_).count();
  events.push_back(PatchApplyEndEvent{call_.call_id, result.stdout_text, result.stderr_text, result.exit_code == 0});
  if (auto diff = diffs_.unified_diff(); !diff.empty()) events.push_back(TurnDiffEvent{std::move(diff)});
  const auto& body = result.exit_code == 0 ? result.stdout_text : result.stderr_text;
  return Done{format_exec_output(body, result.exit_code, secs, false, 0), result.exit_code == 0};
}

// --- MCP tools (engine.md §10.4): read-only tools run at once; `untrusted` asks per tool ----------

ToolFlow::Step ToolFlow::start_mcp(const McpTools::Target& target, std::vector<EventMsg>& events) {
  auto args = mcp_arguments(call_.arguments);
  if (args.error) return Done{*args.error, false};
  mcp_target_ = target;
  mcp_invocation_ = McpInvocation{target.server, target.tool, args.value};
  if (target.read_only || ctx_.approval != AskForApproval::untrusted) return call_mcp(events);
  if (!ctx_.can_ask) return refuse("MCP tool call", events);
  phase_ = Phase::mcp_approval;
  std::vector<std::string> shown{"mcp", target.server, target.tool};
  if (args.value) shown.push_back(args.value->text);
  ExecApprovalRequestEvent ev{call_.call_id, shown, ctx_.cwd,
                              fmt::format("call the tool `{}` of MCP server `{}`", target.tool, target.server),
                              std::nullopt, sandbox::parse_command(shown)};
  ApprovalKey key;  // "approved for session" covers the tool, whatever its arguments
  key.command = {"mcp", target.server, target.tool};
  return Ask{ApprovalRequest{call_.call_id, ctx_.sub_id, std::move(ev), std::move(key)}};
}

ToolFlow::Step ToolFlow::call_mcp(std::vector<EventMsg>& events) {
  phase_ = Phase::mcp_call;
  mcp_started_ = std::chrono::steady_clock::now();
  events.push_back(McpToolCallBeginEvent{call_.call_id, mcp_invocation_});
  McpCall call;
  call.tool = mcp_target_->tool;
  call.arguments = mcp_invocation_.arguments;
  return CallMcp{std::move(call), mcp_target_->client, mcp_target_->timeout_ms};
}

ToolFlow::Step ToolFlow::on_mcp(const McpCallResult& result, std::vector<EventMsg>& events) {
  if (phase_ != Phase::mcp_call) return Done{"internal error: unexpected MCP result", false};
  phase_ = Phase::done;
  auto end = mcp_call_end(call_.call_id, mcp_invocation_, std::chrono::steady_clock::now() - mcp_started_, result);
  events.push_back(std::move(end.event));
  return Done{std::move(end.output), end.success, std::move(end.parts)};
}

// --- the optional file tools (DECISIONS E9): reads in-process, grep through the sandbox ----------

ToolFlow::Step ToolFlow::start_file_tool(std::vector<EventMsg>&) {
  if (call_.name == "read_file") {
    auto out = file_tools::read_file(call_.arguments);
    return Done{truncate_for_model(out.text), out.success};
  }
  if (call_.name == "list_dir") {
    auto out = file_tools::list_dir(call_.arguments);
    return Done{truncate_for_model(out.text), out.success};
  }
  auto cmd = file_tools::grep_command(call_.arguments, ctx_.cwd);
  if (cmd.error) return Done{*cmd.error, false};
  grep_limit_ = cmd.limit;
  phase_ = Phase::grep_run;
  ExecRequest req;
  req.call_id = call_.call_id;
  req.argv = std::move(cmd.argv);
  req.cwd = ctx_.cwd;
  req.env = ctx_.base_env;
  if (ctx_.sandbox.mode != SandboxMode::danger_full_access && ctx_.sandbox_available) req.sandbox = ctx_.sandbox;
  req.sandbox_cwd = ctx_.cwd;
  req.llmx_home = ctx_.llmx_home;
  req.timeout_ms = 30000;
  return Run{std::move(req)};
}

ToolFlow::Step ToolFlow::refuse(std::string_view what, std::vector<EventMsg>&) {
  return Done{fmt::format("This {} was not run: it needs the user's approval (approval policy `{}`, sandbox `{}`), "
                          "and this session cannot ask for approvals. Work within the sandbox, or tell the user "
                          "to re-run with a wider --sandbox or --ask-for-approval never.",
                          what, enum_name(ctx_.approval), enum_name(ctx_.sandbox.mode)),
              false};
}

}  // namespace llmx
