// Submissions (protocol.md §5.1): what a client asks a conversation to do.
#pragma once

#include "protocol/core/events.hpp"
#include "protocol/core/policy.hpp"

namespace llmx {

LLMX_TAGGED(InterruptOp, "interrupt", LLMX_NO_FIELDS)
LLMX_TAGGED(ShutdownOp, "shutdown", LLMX_NO_FIELDS)
LLMX_TAGGED(CompactOp, "compact", LLMX_NO_FIELDS)

// `interactive`: whether this turn's client can answer approvals (an MCP host that declared no
// elicitation cannot: calls needing one are then refused by policy). Absent: the conversation's.
// `exclusive`: start a turn or nothing — while a turn runs, the input is refused (the submit's
// reply is then "") instead of joining that turn (an MCP tool call is one turn, one answer).
LLMX_TAGGED(UserInputOp, "user_input", std::vector<UserInput> items; std::optional<bool> interactive = {};
           std::optional<bool> exclusive = {};
           LLMX_FIELDS(v("items", s.items); v("interactive", s.interactive); v("exclusive", s.exclusive)))

LLMX_TAGGED(UserTurnOp, "user_turn", std::vector<UserInput> items; std::string cwd;
           AskForApproval approval_policy = AskForApproval::on_request; SandboxPolicy sandbox_policy;
           std::string model; std::optional<std::string> effort; std::string summary = "auto";
           RawJson final_output_json_schema;
           LLMX_FIELDS(v("items", s.items); v("cwd", s.cwd); v("approval_policy", s.approval_policy);
                       v("sandbox_policy", s.sandbox_policy); v("model", s.model);
                       v("effort", s.effort); v("summary", s.summary, Field::defaulted);
                       v("final_output_json_schema", s.final_output_json_schema)))

LLMX_TAGGED(OverrideTurnContextOp, "override_turn_context", std::optional<std::string> cwd;
           std::optional<AskForApproval> approval_policy; std::optional<SandboxPolicy> sandbox_policy;
           std::optional<std::string> model; std::optional<std::string> effort;
           std::optional<std::string> summary;
           LLMX_FIELDS(v("cwd", s.cwd); v("approval_policy", s.approval_policy);
                       v("sandbox_policy", s.sandbox_policy); v("model", s.model);
                       v("effort", s.effort); v("summary", s.summary)))

LLMX_TAGGED(ExecApprovalOp, "exec_approval", std::string id; ReviewDecision decision{};
           LLMX_FIELDS(v("id", s.id); v("decision", s.decision)))

LLMX_TAGGED(PatchApprovalOp, "patch_approval", std::string id; ReviewDecision decision{};
           LLMX_FIELDS(v("id", s.id); v("decision", s.decision)))

// The user's answer to an elicitation_request: `decision` is accept, decline or cancel;
// `content` the form's values when accepted.
LLMX_TAGGED(ResolveElicitationOp, "resolve_elicitation", std::string server_name; std::string request_id;
           std::string decision; std::optional<RawJson> content;
           LLMX_FIELDS(v("server_name", s.server_name); v("request_id", s.request_id); v("decision", s.decision);
                       v("content", s.content)))

// Asks for `mcp_list_tools_response`: the MCP tools the conversation's servers offer now.
LLMX_TAGGED(ListMcpToolsOp, "list_mcp_tools", LLMX_NO_FIELDS)

// Input for the running turn, refused unless a turn runs and its id is `expected_turn_id` (v2
// turn/steer); the submit's reply is the running turn's id.
LLMX_TAGGED(SteerOp, "steer", std::vector<UserInput> items; std::string expected_turn_id;
           LLMX_FIELDS(v("items", s.items); v("expected_turn_id", s.expected_turn_id)))

// Drop the last `num_turns` turns from the history (refused while a turn runs); recorded in the
// rollout as thread_rolled_back. File changes are not reverted.
LLMX_TAGGED(ThreadRollbackOp, "thread_rollback", uint32_t num_turns = 0;
           LLMX_FIELDS(v("num_turns", s.num_turns)))

// Set the thread's title (trimmed; refused when empty); recorded as thread_name_updated.
LLMX_TAGGED(SetThreadNameOp, "set_thread_name", std::string name;
           LLMX_FIELDS(v("name", s.name)))

using Op = OneOf<InterruptOp, UserInputOp, UserTurnOp, OverrideTurnContextOp, ExecApprovalOp,
                 PatchApprovalOp, CompactOp, ShutdownOp, ResolveElicitationOp, ListMcpToolsOp, SteerOp,
                 ThreadRollbackOp, SetThreadNameOp>;

// `{"id": ..., "op": Op}`; an empty id asks the conversation to assign the next counter value.
struct Submission {
  std::string id;
  Op op;
  LLMX_FIELDS(v("id", s.id); v("op", s.op))
};

}  // namespace llmx
