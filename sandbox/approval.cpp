#include "sandbox/approval.hpp"

#include <algorithm>
#include <cctype>

#include "sandbox/command_safety.hpp"

namespace llmx::sandbox {

std::string escalation_rejected_message(AskForApproval policy) {
  // The reference prints the Rust variant names (UnlessTrusted, OnFailure, Never); llmx has no
  // Rust enums, so it names the policy the way users write it in config and on the command line.
  std::string name(enum_name(policy));
  return "approval policy is " + name +
         "; reject command — you should not ask for escalated permissions if the approval policy is " +
         name;
}

ExecApprovalRequirement shell_initial_approval(AskForApproval policy, const SandboxPolicy& sandbox,
                                               const std::vector<std::string>& argv,
                                               bool with_escalated_permissions) {
  // §5.3: escalation only makes sense where the model is allowed to ask for it.
  if (with_escalated_permissions && policy != AskForApproval::on_request)
    return ExecApprovalRequirement::forbidden(escalation_rejected_message(policy));
  if (is_known_safe_command(argv)) return ExecApprovalRequirement::skip();
  switch (policy) {
    case AskForApproval::untrusted:
      return ExecApprovalRequirement::needs_approval();
    case AskForApproval::on_failure:
    case AskForApproval::never:
      return ExecApprovalRequirement::skip();
    case AskForApproval::on_request: {
      bool ask = command_might_be_dangerous(argv);
      // Under danger-full-access escalation changes nothing (nothing is sandboxed anyway).
      if (sandbox.mode != SandboxMode::danger_full_access) ask = ask || with_escalated_permissions;
      return ask ? ExecApprovalRequirement::needs_approval() : ExecApprovalRequirement::skip();
    }
  }
  return ExecApprovalRequirement::needs_approval();
}

DenialAction on_sandbox_denial(AskForApproval policy, bool already_approved) {
  switch (policy) {
    case AskForApproval::untrusted:
    case AskForApproval::on_failure:
      // The user already said yes to this very call: a second prompt would only repeat it.
      return already_approved ? DenialAction::retry_unsandboxed
                              : DenialAction::ask_then_retry_unsandboxed;
    case AskForApproval::on_request:  // the model may re-issue with with_escalated_permissions
    case AskForApproval::never:
      return DenialAction::return_denial;
  }
  return DenialAction::return_denial;
}

PatchSafety assess_patch_safety(AskForApproval policy, const SandboxPolicy& sandbox, bool patch_is_empty,
                                bool all_paths_writable, bool platform_sandbox_available) {
  using K = PatchSafety::Kind;
  if (patch_is_empty) return {K::reject, std::string(kPatchRejectedEmpty)};
  if (policy == AskForApproval::untrusted) return {K::ask_user, {}};
  if (all_paths_writable || policy == AskForApproval::on_failure) {
    if (sandbox.mode == SandboxMode::danger_full_access) return {K::auto_approve_unsandboxed, {}};
    // Auto-approval is only safe when a sandbox will hold the write to the allowed roots.
    if (platform_sandbox_available) return {K::auto_approve_sandboxed, {}};
    return {K::ask_user, {}};
  }
  if (policy == AskForApproval::never) return {K::reject, std::string(kPatchRejectedOutsideProject)};
  return {K::ask_user, {}};
}

DenialAction patch_on_sandbox_denial(AskForApproval policy) {
  switch (policy) {
    case AskForApproval::untrusted:
    case AskForApproval::on_request:
      return DenialAction::retry_unsandboxed;
    case AskForApproval::on_failure:
      return DenialAction::ask_then_retry_unsandboxed;
    case AskForApproval::never:
      return DenialAction::return_denial;
  }
  return DenialAction::return_denial;
}

bool ApprovalCache::approved_for_session(const ShellApprovalKey& key) const {
  return commands_.count(key) != 0;
}

void ApprovalCache::remember(const ShellApprovalKey& key) { commands_.insert(key); }

bool ApprovalCache::approved_for_session(const PatchApprovalKey& key) const {
  // A patch that touches no file has nothing approved about it.
  if (key.files.empty()) return false;
  return std::all_of(key.files.begin(), key.files.end(),
                     [&](const std::string& f) { return files_.count(f) != 0; });
}

void ApprovalCache::remember(const PatchApprovalKey& key) {
  files_.insert(key.files.begin(), key.files.end());
}

namespace {
// Clients differ in case and stray whitespace; neither changes what the user meant.
std::string normalized(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return t;
}
}  // namespace

ParsedDecision parse_decision_checked(std::string_view text) {
  std::string t = normalized(text);
  if (t == "approved" || t == "allow" || t == "accept") return {ReviewDecision::approved, true};
  if (t == "approved_for_session") return {ReviewDecision::approved_for_session, true};
  if (t == "denied" || t == "deny" || t == "decline") return {ReviewDecision::denied, true};
  // `cancel` (the user dismissed the elicitation) is a "no" to this call, not an order to stop
  // the whole task; only an explicit `abort` interrupts.
  if (t == "cancel") return {ReviewDecision::denied, true};
  if (t == "abort") return {ReviewDecision::abort, true};
  return {ReviewDecision::denied, false};
}

ReviewDecision parse_decision(std::string_view text) { return parse_decision_checked(text).decision; }

ReviewDecision parse_elicitation_reply(std::string_view action,
                                       std::optional<std::string_view> content_decision) {
  std::string a = normalized(action);
  if (a == "accept") return content_decision ? parse_decision(*content_decision) : ReviewDecision::approved;
  if (a == "decline" || a == "cancel") return ReviewDecision::denied;
  // Not an elicitation action: a client that answered with a decision word directly.
  return parse_decision(action);
}

}  // namespace llmx::sandbox
