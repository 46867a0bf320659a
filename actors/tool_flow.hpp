// One tool call from the model to its output, free of actors: argument parsing, apply_patch
// interception, the approval and sandbox decisions (engine.md §7.1–7.3), retries after a
// sandbox denial, and the events the client sees. The turn executor drives it: each step says
// what to do next (ask for approval, run a command, or done) and the executor feeds back the
// answer.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/mcp_tools.hpp"
#include "actors/messages.hpp"
#include "sandbox/apply_patch.hpp"
#include "sandbox/turn_diff.hpp"

namespace llmx {

// What a tool call may do in this turn.
struct ToolContext {
  std::string sub_id;
  std::string cwd;
  AskForApproval approval = AskForApproval::on_request;
  SandboxPolicy sandbox;
  std::map<std::string, std::string> base_env;  // child env before the network flag
  bool can_ask = true;                          // false: nobody to ask (llmx exec)
  int64_t default_timeout_ms = 10000;
  bool allow_git_writes = false;
  std::string llmx_home;  // its secrets are hidden from commands
  // Whether Landlock and seccomp are both available, and what to do if not (DECISIONS E11).
  bool sandbox_available = true;
  std::string sandbox_summary;
  bool fallback_with_approval = false;
  std::shared_ptr<const McpTools> mcp;  // the configured MCP servers' tools, if any
  std::vector<std::string> file_tools;  // the optional file tools offered (read_file, list_dir, grep_files)
  bool files_through_client = false;    // patches read and write through the client (ACP fs/*)
};

class ToolFlow {
 public:
  struct Ask {
    ApprovalRequest request;
  };
  struct Run {
    ExecRequest request;
  };
  // Call an MCP tool; answer with on_mcp(). The executor fills in the call's key and caller.
  struct CallMcp {
    McpCall call;
    caf::strong_actor_ptr client;
    int64_t timeout_ms = 60000;  // the client answers within this (its tool timeout)
  };
  // Read or write files through the client (ACP fs/*); answer with on_files().
  struct Files {
    FileIo io;
  };
  struct Done {
    std::string output;
    bool success = false;
    std::optional<std::vector<ContentItem>> parts = std::nullopt;  // the output with images (MCP results)
  };
  using Step = std::variant<Ask, Run, CallMcp, Files, Done>;

  ToolFlow(FunctionCallItem call, const ToolContext& ctx, patch::TurnDiffTracker& diffs);

  Step start(std::vector<EventMsg>& events);
  Step on_approval(const ApprovalReply& reply, std::vector<EventMsg>& events);
  Step on_exec(const ExecDone& done, std::vector<EventMsg>& events);
  Step on_mcp(const McpCallResult& result, std::vector<EventMsg>& events);
  Step on_files(const FileIoDone& done, std::vector<EventMsg>& events);

  // The user answered `abort`: the turn must end (after this call's output is recorded).
  bool aborted() const { return aborted_; }
  const FunctionCallItem& call() const { return call_; }
  // An MCP tool call was sent and is not answered yet.
  bool in_mcp_call() const { return phase_ == Phase::mcp_call; }

 private:
  enum class Phase {
    initial_approval,
    first_run,
    retry_approval,
    retry_run,
    patch_approval,
    mcp_approval,
    mcp_call,
    grep_run,
    patch_read,   // the client reads the files the patch updates
    patch_write,  // the client writes the patched files
    done
  };

  Step start_shell(std::vector<EventMsg>& events);
  Step start_patch(const patch::Patch& p, const std::string& cwd, std::vector<EventMsg>& events);
  Step run(bool sandboxed, std::vector<EventMsg>& events);
  Step finish_exec(const ExecDone& done, std::vector<EventMsg>& events);
  Step decide_patch(patch::Result<patch::Verified> verified, std::vector<EventMsg>& events);
  Step apply_patch_now(bool user_approved, std::vector<EventMsg>& events);
  Step patch_applied(const patch::ApplyResult& result, std::vector<EventMsg>& events);
  Step refuse(std::string_view what, std::vector<EventMsg>& events);
  Step start_mcp(const McpTools::Target& target, std::vector<EventMsg>& events);
  Step call_mcp(std::vector<EventMsg>& events);
  Step start_file_tool(std::vector<EventMsg>& events);
  ApprovalKey shell_key() const;

  FunctionCallItem call_;
  ToolContext ctx_;
  patch::TurnDiffTracker& diffs_;
  Phase phase_ = Phase::done;
  bool aborted_ = false;
  bool already_approved_ = false;
  // shell
  std::vector<std::string> argv_;
  std::string workdir_;
  int64_t timeout_ms_ = 10000;
  bool escalated_ = false;
  bool unsandboxed_fallback_ = false;  // no OS sandbox here: the approved command runs without one
  std::optional<std::string> justification_;
  // apply_patch
  std::optional<patch::Verified> patch_;
  std::chrono::steady_clock::time_point patch_started_;
  // Through the client (ACP fs/*): the patch waiting for its files, their texts as the client
  // read them (verified, approved and applied against this one snapshot), the outcome once
  // written, and the files deleted here once the writes succeeded.
  std::optional<std::pair<patch::Patch, std::string>> pending_patch_;
  std::map<std::string, std::string> snapshot_;
  std::optional<patch::ApplyResult> patch_result_;
  std::vector<std::string> patch_removals_;
  // MCP
  std::optional<McpTools::Target> mcp_target_;
  McpInvocation mcp_invocation_;
  std::chrono::steady_clock::time_point mcp_started_;
  size_t grep_limit_ = 100;
};

// The writable check of a patch against the sandbox, on resolved paths: a symlink inside the
// workspace that points outside it does not make its target writable.
bool patch_paths_writable(const patch::Patch& p, const std::string& cwd, const SandboxPolicy& sandbox);

}  // namespace llmx
