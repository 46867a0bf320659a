// The approval decision tables (engine.md §7.1–§7.4, DECISIONS E12, P3, P4) as pure functions.
// The approval broker actor asks these what to do; it owns the prompts and the session cache.
#pragma once

#include <compare>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/core/policy.hpp"

namespace llmx::sandbox {

using llmx::AskForApproval;
using llmx::ReviewDecision;
using llmx::SandboxMode;
using llmx::SandboxPolicy;

// --- shell / exec_command ----------------------------------------------------------------------

struct ExecApprovalRequirement {
  enum class Kind { skip, needs_approval, forbidden };
  Kind kind = Kind::skip;
  std::string reason;  // only for `forbidden`: the text the model receives

  static ExecApprovalRequirement skip() { return {Kind::skip, {}}; }
  static ExecApprovalRequirement needs_approval() { return {Kind::needs_approval, {}}; }
  static ExecApprovalRequirement forbidden(std::string why) { return {Kind::forbidden, std::move(why)}; }
  friend bool operator==(const ExecApprovalRequirement&, const ExecApprovalRequirement&) = default;
};

// §5.3 point 2 text for an escalation request under a policy other than on-request.
std::string escalation_rejected_message(AskForApproval policy);

// §7.2 first table, preceded by the §5.3 escalation rejection.
ExecApprovalRequirement shell_initial_approval(AskForApproval policy, const SandboxPolicy& sandbox,
                                               const std::vector<std::string>& argv,
                                               bool with_escalated_permissions);

// What to do after the sandbox denied a run (§7.1 step 3).
enum class DenialAction {
  return_denial,               // the model gets the failed output
  ask_then_retry_unsandboxed,  // prompt with kRetryWithoutSandboxReason, then retry if approved
  retry_unsandboxed,           // retry without the sandbox, no prompt
};

inline constexpr std::string_view kRetryWithoutSandboxReason = "command failed; retry without sandbox?";

// §7.2 second table. `already_approved`: the user approved this call in the initial step.
DenialAction on_sandbox_denial(AskForApproval policy, bool already_approved);

// --- apply_patch -------------------------------------------------------------------------------

struct PatchSafety {
  enum class Kind { reject, ask_user, auto_approve_sandboxed, auto_approve_unsandboxed };
  Kind kind = Kind::ask_user;
  std::string reason;  // only for `reject`: the text the model receives

  friend bool operator==(const PatchSafety&, const PatchSafety&) = default;
};

inline constexpr std::string_view kPatchRejectedEmpty = "patch rejected: empty patch";
inline constexpr std::string_view kPatchRejectedOutsideProject =
    "patch rejected: writing outside of the project; rejected by user approval settings";
inline constexpr std::string_view kPatchRejectedByUser = "patch rejected by user";

// §7.3 step A. `all_paths_writable` is true for danger-full-access, false for read-only and, for
// workspace-write, whether every touched path lies under a writable root outside its `.git`.
PatchSafety assess_patch_safety(AskForApproval policy, const SandboxPolicy& sandbox, bool patch_is_empty,
                                bool all_paths_writable, bool platform_sandbox_available);

// §7.3 step B: retry after a sandbox denial while applying a patch.
DenialAction patch_on_sandbox_denial(AskForApproval policy);

// --- approve for session (§7.4, E12) -----------------------------------------------------------

struct ShellApprovalKey {
  std::vector<std::string> command;
  std::string cwd;
  bool escalated = false;
  friend auto operator<=>(const ShellApprovalKey&, const ShellApprovalKey&) = default;
};

// The files a patch touches (adds, deletes, updates and move destinations), as absolute paths.
struct PatchApprovalKey {
  std::set<std::string> files;
};

// Session-wide memory of `approved_for_session` answers. Remember only that decision. Not
// thread-safe: one owner (the session's approval broker) uses it.
class ApprovalCache {
 public:
  bool approved_for_session(const ShellApprovalKey& key) const;
  void remember(const ShellApprovalKey& key);
  // A patch is covered when every file it touches was in some patch approved for the session.
  bool approved_for_session(const PatchApprovalKey& key) const;
  void remember(const PatchApprovalKey& key);

 private:
  std::set<ShellApprovalKey> commands_;
  std::set<std::string> files_;
};

// --- decisions from clients (P3, P4) -----------------------------------------------------------

struct ParsedDecision {
  ReviewDecision decision = ReviewDecision::denied;
  bool recognized = false;  // false: the text was not a known spelling (counted as denied)
};

// `approved`, `approved_for_session`, `denied`, `abort`, the seed's `allow`/`deny`, and the MCP
// elicitation actions `accept` (approved), `decline` and `cancel` (both denied). Anything else
// is denied.
ParsedDecision parse_decision_checked(std::string_view text);
ReviewDecision parse_decision(std::string_view text);

// An MCP elicitation reply `{action, content?: {decision?}}` (P4). `accept` takes the content's
// decision when one is given (so `approved_for_session` survives), else means approved.
ReviewDecision parse_elicitation_reply(std::string_view action,
                                       std::optional<std::string_view> content_decision);

}  // namespace llmx::sandbox
