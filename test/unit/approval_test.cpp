// Unit tests for the approval decision tables (engine.md §5.3, §7.1–§7.4), the session approval
// cache (DECISIONS E12) and the decision spellings clients may send (DECISIONS P3, P4).
#include "sandbox/approval.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace llmx::sandbox;
using llmx::enum_name;

namespace {

using ApprovalKind = ExecApprovalRequirement::Kind;

const AskForApproval kPolicies[] = {AskForApproval::untrusted, AskForApproval::on_failure,
                                    AskForApproval::on_request, AskForApproval::never};
const SandboxMode kModes[] = {SandboxMode::read_only, SandboxMode::workspace_write,
                              SandboxMode::danger_full_access};

SandboxPolicy sandbox_of(SandboxMode m) {
  SandboxPolicy p;
  p.mode = m;
  return p;
}

// S = skip, A = needs approval, F = forbidden.
char letter(const ExecApprovalRequirement& r) {
  switch (r.kind) {
    case ApprovalKind::skip: return 'S';
    case ApprovalKind::needs_approval: return 'A';
    case ApprovalKind::forbidden: return 'F';
  }
  return '?';
}

std::string escalation_text(std::string_view policy) {
  return "approval policy is " + std::string(policy) +
         "; reject command — you should not ask for escalated permissions if the approval policy is " +
         std::string(policy);
}

}  // namespace

TEST_CASE("approval: shell initial approval over policy x sandbox mode x command class") {
  struct Class {
    const char* name;
    std::vector<std::string> argv;
    bool escalated;
  };
  const Class known_safe{"known-safe", {"bash", "-lc", "ls && pwd"}, false};
  const Class dangerous{"dangerous", {"git", "reset", "--hard"}, false};
  const Class other{"other", {"python3", "build.py"}, false};
  const Class escalated{"escalated", {"python3", "build.py"}, true};
  const Class escalated_safe{"escalated known-safe", {"ls"}, true};
  const Class escalated_dangerous{"escalated dangerous", {"rm", "-rf", "build"}, true};

  // Expected letters for read-only, workspace-write, danger-full-access.
  struct Row {
    AskForApproval policy;
    const Class& cls;
    const char* expected;
  };
  const Row rows[] = {
      {AskForApproval::untrusted, known_safe, "SSS"},
      {AskForApproval::untrusted, dangerous, "AAA"},
      {AskForApproval::untrusted, other, "AAA"},
      {AskForApproval::untrusted, escalated, "FFF"},
      {AskForApproval::untrusted, escalated_safe, "FFF"},
      {AskForApproval::untrusted, escalated_dangerous, "FFF"},
      {AskForApproval::on_failure, known_safe, "SSS"},
      {AskForApproval::on_failure, dangerous, "SSS"},
      {AskForApproval::on_failure, other, "SSS"},
      {AskForApproval::on_failure, escalated, "FFF"},
      {AskForApproval::on_failure, escalated_safe, "FFF"},
      {AskForApproval::on_failure, escalated_dangerous, "FFF"},
      {AskForApproval::on_request, known_safe, "SSS"},
      {AskForApproval::on_request, dangerous, "AAA"},
      {AskForApproval::on_request, other, "SSS"},
      {AskForApproval::on_request, escalated, "AAS"},
      {AskForApproval::on_request, escalated_safe, "SSS"},
      {AskForApproval::on_request, escalated_dangerous, "AAA"},
      {AskForApproval::never, known_safe, "SSS"},
      {AskForApproval::never, dangerous, "SSS"},
      {AskForApproval::never, other, "SSS"},
      {AskForApproval::never, escalated, "FFF"},
      {AskForApproval::never, escalated_safe, "FFF"},
      {AskForApproval::never, escalated_dangerous, "FFF"},
  };
  for (const auto& row : rows) {
    for (int m = 0; m < 3; ++m) {
      std::string_view policy = enum_name(row.policy), mode = enum_name(kModes[m]);
      std::string cls = row.cls.name;
      CAPTURE(policy);
      CAPTURE(mode);
      CAPTURE(cls);
      auto r = shell_initial_approval(row.policy, sandbox_of(kModes[m]), row.cls.argv, row.cls.escalated);
      CHECK(letter(r) == row.expected[m]);
      if (r.kind == ApprovalKind::forbidden)
        CHECK(r.reason == escalation_text(policy));
      else
        CHECK(r.reason.empty());
    }
  }
}

TEST_CASE("approval: escalation rejection names the policy in kebab case") {
  CHECK(escalation_rejected_message(AskForApproval::on_failure) ==
        "approval policy is on-failure; reject command — you should not ask for escalated "
        "permissions if the approval policy is on-failure");
  CHECK(escalation_rejected_message(AskForApproval::untrusted) ==
        "approval policy is untrusted; reject command — you should not ask for escalated "
        "permissions if the approval policy is untrusted");
  CHECK(escalation_rejected_message(AskForApproval::never) ==
        "approval policy is never; reject command — you should not ask for escalated permissions "
        "if the approval policy is never");
}

TEST_CASE("approval: shell sandbox denial table") {
  struct Row {
    AskForApproval policy;
    bool already_approved;
    DenialAction expected;
  };
  const Row rows[] = {
      {AskForApproval::untrusted, false, DenialAction::ask_then_retry_unsandboxed},
      {AskForApproval::untrusted, true, DenialAction::retry_unsandboxed},
      {AskForApproval::on_failure, false, DenialAction::ask_then_retry_unsandboxed},
      {AskForApproval::on_failure, true, DenialAction::retry_unsandboxed},
      {AskForApproval::on_request, false, DenialAction::return_denial},
      {AskForApproval::on_request, true, DenialAction::return_denial},
      {AskForApproval::never, false, DenialAction::return_denial},
      {AskForApproval::never, true, DenialAction::return_denial},
  };
  for (const auto& row : rows) {
    std::string_view policy = enum_name(row.policy);
    CAPTURE(policy);
    CAPTURE(row.already_approved);
    CHECK(on_sandbox_denial(row.policy, row.already_approved) == row.expected);
  }
  CHECK(kRetryWithoutSandboxReason == "command failed; retry without sandbox?");
}

TEST_CASE("approval: apply_patch safety over policy x sandbox x writable x platform sandbox") {
  // Letters per policy, in the order read-only, workspace-write, danger-full-access; within each
  // mode (writable, platform) = (no,no) (no,yes) (yes,no) (yes,yes).
  // A = ask user, S = auto-approve sandboxed, U = auto-approve unsandboxed, R = reject.
  struct Row {
    AskForApproval policy;
    const char* expected;
  };
  const Row rows[] = {
      {AskForApproval::untrusted, "AAAA" "AAAA" "AAAA"},
      {AskForApproval::on_failure, "ASAS" "ASAS" "UUUU"},
      {AskForApproval::on_request, "AAAS" "AAAS" "AAUU"},
      {AskForApproval::never, "RRAS" "RRAS" "RRUU"},
  };
  auto letter_of = [](const PatchSafety& s) {
    switch (s.kind) {
      case PatchSafety::Kind::reject: return 'R';
      case PatchSafety::Kind::ask_user: return 'A';
      case PatchSafety::Kind::auto_approve_sandboxed: return 'S';
      case PatchSafety::Kind::auto_approve_unsandboxed: return 'U';
    }
    return '?';
  };
  for (const auto& row : rows) {
    int i = 0;
    for (SandboxMode mode : kModes) {
      for (bool writable : {false, true}) {
        for (bool platform : {false, true}) {
          std::string_view policy = enum_name(row.policy), mode_name = enum_name(mode);
          CAPTURE(policy);
          CAPTURE(mode_name);
          CAPTURE(writable);
          CAPTURE(platform);
          auto s = assess_patch_safety(row.policy, sandbox_of(mode), false, writable, platform);
          CHECK(letter_of(s) == row.expected[i]);
          if (s.kind == PatchSafety::Kind::reject)
            CHECK(s.reason == "patch rejected: writing outside of the project; rejected by user "
                              "approval settings");
          else
            CHECK(s.reason.empty());
          // An empty patch is rejected first, whatever else holds.
          auto e = assess_patch_safety(row.policy, sandbox_of(mode), true, writable, platform);
          CHECK(e.kind == PatchSafety::Kind::reject);
          CHECK(e.reason == "patch rejected: empty patch");
          ++i;
        }
      }
    }
  }
}

TEST_CASE("approval: apply_patch sandbox denial table") {
  CHECK(patch_on_sandbox_denial(AskForApproval::untrusted) == DenialAction::retry_unsandboxed);
  CHECK(patch_on_sandbox_denial(AskForApproval::on_failure) == DenialAction::ask_then_retry_unsandboxed);
  CHECK(patch_on_sandbox_denial(AskForApproval::on_request) == DenialAction::retry_unsandboxed);
  CHECK(patch_on_sandbox_denial(AskForApproval::never) == DenialAction::return_denial);
}

TEST_CASE("approval: session cache matches the exact command, cwd and escalation") {
  ApprovalCache cache;
  ShellApprovalKey key{{"cargo", "build"}, "/work", false};
  CHECK_FALSE(cache.approved_for_session(key));
  cache.remember(key);
  CHECK(cache.approved_for_session(key));
  CHECK(cache.approved_for_session(ShellApprovalKey{{"cargo", "build"}, "/work", false}));
  CHECK_FALSE(cache.approved_for_session(ShellApprovalKey{{"cargo", "build"}, "/other", false}));
  CHECK_FALSE(cache.approved_for_session(ShellApprovalKey{{"cargo", "build"}, "/work", true}));
  CHECK_FALSE(cache.approved_for_session(ShellApprovalKey{{"cargo", "build", "--release"}, "/work", false}));
  CHECK_FALSE(cache.approved_for_session(ShellApprovalKey{{"cargo build"}, "/work", false}));
}

TEST_CASE("approval: session cache for patches covers files approved before") {
  ApprovalCache cache;
  CHECK_FALSE(cache.approved_for_session(PatchApprovalKey{{"/w/a.rs"}}));
  cache.remember(PatchApprovalKey{{"/w/a.rs", "/w/b.rs"}});
  CHECK(cache.approved_for_session(PatchApprovalKey{{"/w/a.rs"}}));
  CHECK(cache.approved_for_session(PatchApprovalKey{{"/w/b.rs", "/w/a.rs"}}));
  CHECK_FALSE(cache.approved_for_session(PatchApprovalKey{{"/w/a.rs", "/w/c.rs"}}));
  CHECK_FALSE(cache.approved_for_session(PatchApprovalKey{{}}));
  cache.remember(PatchApprovalKey{{"/w/c.rs"}});
  CHECK(cache.approved_for_session(PatchApprovalKey{{"/w/a.rs", "/w/c.rs"}}));
  // Shell and patch entries do not mix.
  CHECK_FALSE(cache.approved_for_session(ShellApprovalKey{{"/w/a.rs"}, "/w", false}));
}

TEST_CASE("approval: decision spellings") {
  struct Row {
    const char* text;
    ReviewDecision decision;
    bool recognized;
  };
  const Row rows[] = {
      {"approved", ReviewDecision::approved, true},
      {"approved_for_session", ReviewDecision::approved_for_session, true},
      {"denied", ReviewDecision::denied, true},
      {"abort", ReviewDecision::abort, true},
      {"allow", ReviewDecision::approved, true},
      {"deny", ReviewDecision::denied, true},
      {"accept", ReviewDecision::approved, true},
      {"decline", ReviewDecision::denied, true},
      {"cancel", ReviewDecision::denied, true},
      {" Approved\n", ReviewDecision::approved, true},
      {"ALLOW", ReviewDecision::approved, true},
      {"", ReviewDecision::denied, false},
      {"yes", ReviewDecision::denied, false},
      {"approve", ReviewDecision::denied, false},
      {"approved_for_sessions", ReviewDecision::denied, false},
      {"{\"decision\":\"approved\"}", ReviewDecision::denied, false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    auto p = parse_decision_checked(row.text);
    CHECK(p.decision == row.decision);
    CHECK(p.recognized == row.recognized);
    CHECK(parse_decision(row.text) == row.decision);
  }
}

TEST_CASE("approval: MCP elicitation replies") {
  using O = std::optional<std::string_view>;
  CHECK(parse_elicitation_reply("accept", O{}) == ReviewDecision::approved);
  CHECK(parse_elicitation_reply("accept", O{"approved_for_session"}) == ReviewDecision::approved_for_session);
  CHECK(parse_elicitation_reply("accept", O{"denied"}) == ReviewDecision::denied);
  CHECK(parse_elicitation_reply("accept", O{"abort"}) == ReviewDecision::abort);
  CHECK(parse_elicitation_reply("accept", O{"garbage"}) == ReviewDecision::denied);
  CHECK(parse_elicitation_reply("decline", O{"approved"}) == ReviewDecision::denied);
  CHECK(parse_elicitation_reply("cancel", O{}) == ReviewDecision::denied);
  CHECK(parse_elicitation_reply("cancel", O{"approved"}) == ReviewDecision::denied);
  // Legacy replies carry the decision word itself.
  CHECK(parse_elicitation_reply("approved_for_session", O{}) == ReviewDecision::approved_for_session);
  CHECK(parse_elicitation_reply("nonsense", O{}) == ReviewDecision::denied);
}
