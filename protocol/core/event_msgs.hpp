// Every EventMsg variant llmx emits (protocol.md §5.3), one struct each, tag = `kind`.
#pragma once

#include "protocol/core/events.hpp"

namespace llmx {

LLMX_TAGGED_STRING(ErrorEvent, "error", message)
LLMX_TAGGED_STRING(WarningEvent, "warning", message)
// The warnings of an answer the model did not finish (clients map them: ACP's stop reasons).
inline constexpr std::string_view kOutputLimitWarning =
    "The model stopped because it reached its output token limit; the answer may be incomplete.";
inline constexpr std::string_view kContentFilterWarning = "The provider's content filter stopped the answer.";
LLMX_TAGGED_STRING(StreamErrorEvent, "stream_error", message)
LLMX_TAGGED_STRING(BackgroundEvent, "background_event", message)
LLMX_TAGGED_STRING(AgentMessageEvent, "agent_message", message)
LLMX_TAGGED_STRING(AgentMessageDeltaEvent, "agent_message_delta", delta)
LLMX_TAGGED_STRING(AgentReasoningEvent, "agent_reasoning", text)
LLMX_TAGGED_STRING(AgentReasoningDeltaEvent, "agent_reasoning_delta", delta)
LLMX_TAGGED_STRING(AgentReasoningRawContentEvent, "agent_reasoning_raw_content", text)
LLMX_TAGGED_STRING(AgentReasoningRawContentDeltaEvent, "agent_reasoning_raw_content_delta", delta)
LLMX_TAGGED_STRING(TurnDiffEvent, "turn_diff", unified_diff)

enum class TurnAbortReason { interrupted, replaced, review_ended };
template <>
struct EnumTraits<TurnAbortReason> {
  static constexpr std::array<std::pair<TurnAbortReason, std::string_view>, 3> values{{
      {TurnAbortReason::interrupted, "interrupted"},
      {TurnAbortReason::replaced, "replaced"},
      {TurnAbortReason::review_ended, "review_ended"},
  }};
};
LLMX_TAGGED(TurnAbortedEvent, "turn_aborted", TurnAbortReason reason = TurnAbortReason::interrupted;
           LLMX_FIELDS(v("reason", s.reason)))

// The events a resumed session replays (`initial_messages`): a JSON array of EventMsg, kept as
// text because EventMsg cannot contain itself; this type gives that text its schema.
struct RecordedEvents {};
schema::Node json_schema(const RecordedEvents*, schema::Context& c);

LLMX_TAGGED(AgentReasoningSectionBreakEvent, "agent_reasoning_section_break", LLMX_NO_FIELDS)
LLMX_TAGGED(ShutdownCompleteEvent, "shutdown_complete", LLMX_NO_FIELDS)

LLMX_TAGGED(TaskStartedEvent, "task_started", Nullable<int64_t> model_context_window;
           LLMX_FIELDS(v("model_context_window", s.model_context_window)))

LLMX_TAGGED(TaskCompleteEvent, "task_complete", Nullable<std::string> last_agent_message;
           LLMX_FIELDS(v("last_agent_message", s.last_agent_message)))

LLMX_TAGGED(TokenCountEvent, "token_count", Nullable<TokenUsageInfo> info;
           Nullable<RateLimitSnapshot> rate_limits;
           LLMX_FIELDS(v("info", s.info); v("rate_limits", s.rate_limits)))

LLMX_TAGGED(UserMessageEvent, "user_message", std::string message; std::vector<std::string> images;
           LLMX_FIELDS(v("message", s.message); v("images", s.images, Field::defaulted)))

LLMX_TAGGED(SessionConfiguredEvent, "session_configured", std::string session_id; std::string model;
           std::optional<std::string> reasoning_effort; uint64_t history_log_id = 0;
           uint64_t history_entry_count = 0;
           // Resumed sessions only: the recorded events.
           std::optional<JsonOf<RecordedEvents>> initial_messages; std::string rollout_path;
           // llmx: present when the configured sandbox cannot be enforced here (DECISIONS E11).
           std::optional<std::string> sandbox_warning;
           // llmx: the wire requests take (`chat` | `responses`) and, for a provider configured
           // `wire_api = "auto"` that refused Responses earlier in this process, why it takes Chat.
           std::optional<std::string> wire_api; std::optional<std::string> wire_api_fallback;
           LLMX_FIELDS(v("session_id", s.session_id); v("model", s.model);
                       v("reasoning_effort", s.reasoning_effort);
                       v("history_log_id", s.history_log_id, Field::defaulted);
                       v("history_entry_count", s.history_entry_count, Field::defaulted);
                       v("initial_messages", s.initial_messages);
                       v("rollout_path", s.rollout_path); v("sandbox_warning", s.sandbox_warning);
                       v("wire_api", s.wire_api); v("wire_api_fallback", s.wire_api_fallback)))

LLMX_TAGGED(ExecCommandBeginEvent, "exec_command_begin", std::string call_id;
           std::vector<std::string> command; std::string cwd; std::vector<ParsedCommand> parsed_cmd;
           bool is_user_shell_command = false;
           LLMX_FIELDS(v("call_id", s.call_id); v("command", s.command); v("cwd", s.cwd);
                       v("parsed_cmd", s.parsed_cmd, Field::defaulted);
                       v("is_user_shell_command", s.is_user_shell_command, Field::defaulted)))

LLMX_TAGGED(ExecCommandOutputDeltaEvent, "exec_command_output_delta", std::string call_id;
           std::string stream; Base64Bytes chunk;
           LLMX_FIELDS(v("call_id", s.call_id); v("stream", s.stream); v("chunk", s.chunk)))

LLMX_TAGGED(ExecCommandEndEvent, "exec_command_end", std::string call_id; std::string stdout_text;
           std::string stderr_text; std::string aggregated_output; int64_t exit_code = 0;
           Duration duration; std::string formatted_output;
           LLMX_FIELDS(v("call_id", s.call_id); v("stdout", s.stdout_text); v("stderr", s.stderr_text);
                       v("aggregated_output", s.aggregated_output, Field::defaulted);
                       v("exit_code", s.exit_code); v("duration", s.duration);
                       v("formatted_output", s.formatted_output, Field::defaulted)))

enum class RiskLevel { low, medium, high };
template <>
struct EnumTraits<RiskLevel> {
  static constexpr std::array<std::pair<RiskLevel, std::string_view>, 3> values{{
      {RiskLevel::low, "low"},
      {RiskLevel::medium, "medium"},
      {RiskLevel::high, "high"},
  }};
};

struct SandboxCommandAssessment {
  std::string description;
  RiskLevel risk_level = RiskLevel::low;
  LLMX_FIELDS(v("description", s.description); v("risk_level", s.risk_level))
};

LLMX_TAGGED(ExecApprovalRequestEvent, "exec_approval_request", std::string call_id;
           std::vector<std::string> command; std::string cwd; std::optional<std::string> reason;
           std::optional<SandboxCommandAssessment> risk; std::vector<ParsedCommand> parsed_cmd;
           LLMX_FIELDS(v("call_id", s.call_id); v("command", s.command); v("cwd", s.cwd);
                       v("reason", s.reason); v("risk", s.risk);
                       v("parsed_cmd", s.parsed_cmd, Field::defaulted)))

LLMX_TAGGED(ApplyPatchApprovalRequestEvent, "apply_patch_approval_request", std::string call_id;
           std::map<std::string, FileChange> changes; std::optional<std::string> reason;
           std::optional<std::string> grant_root;
           LLMX_FIELDS(v("call_id", s.call_id); v("changes", s.changes); v("reason", s.reason);
                       v("grant_root", s.grant_root)))

LLMX_TAGGED(PatchApplyBeginEvent, "patch_apply_begin", std::string call_id; bool auto_approved = false;
           std::map<std::string, FileChange> changes;
           LLMX_FIELDS(v("call_id", s.call_id); v("auto_approved", s.auto_approved);
                       v("changes", s.changes)))

LLMX_TAGGED(PatchApplyEndEvent, "patch_apply_end", std::string call_id; std::string stdout_text;
           std::string stderr_text; bool success = false;
           LLMX_FIELDS(v("call_id", s.call_id); v("stdout", s.stdout_text); v("stderr", s.stderr_text);
                       v("success", s.success)))

LLMX_TAGGED(PlanUpdateEvent, "plan_update", Nullable<std::string> explanation;
           std::vector<PlanItem> plan;
           LLMX_FIELDS(v("explanation", s.explanation); v("plan", s.plan)))

LLMX_TAGGED(RawResponseItemEvent, "raw_response_item", ResponseItem item;
           LLMX_FIELDS(v("item", s.item)))

LLMX_TAGGED(ItemStartedEvent, "item_started", std::string thread_id; std::string turn_id;
           TurnItem item;
           LLMX_FIELDS(v("thread_id", s.thread_id); v("turn_id", s.turn_id); v("item", s.item)))

LLMX_TAGGED(ItemCompletedEvent, "item_completed", std::string thread_id; std::string turn_id;
           TurnItem item;
           LLMX_FIELDS(v("thread_id", s.thread_id); v("turn_id", s.turn_id); v("item", s.item)))

// One per streamed delta: the ids are shared, so a delta costs no copy of them.
#define LLMX_CONTENT_DELTA(Name, tag)                                                        \
  LLMX_TAGGED(Name, tag, SharedString thread_id; SharedString turn_id; SharedString item_id; \
             std::string delta;                                                             \
             LLMX_FIELDS(v("thread_id", s.thread_id); v("turn_id", s.turn_id);              \
                         v("item_id", s.item_id); v("delta", s.delta)))
LLMX_CONTENT_DELTA(AgentMessageContentDeltaEvent, "agent_message_content_delta")
LLMX_CONTENT_DELTA(ReasoningContentDeltaEvent, "reasoning_content_delta")
LLMX_CONTENT_DELTA(ReasoningRawContentDeltaEvent, "reasoning_raw_content_delta")

// --- configured MCP servers (engine.md §10) ---------------------------------------------------

struct McpInvocation {
  std::string server;
  std::string tool;
  std::optional<RawJson> arguments;  // null when the model sent none
  LLMX_FIELDS(v("server", s.server); v("tool", s.tool); v("arguments", s.arguments))
};

LLMX_TAGGED(McpToolCallBeginEvent, "mcp_tool_call_begin", std::string call_id; McpInvocation invocation;
           LLMX_FIELDS(v("call_id", s.call_id); v("invocation", s.invocation)))

// `result` is `{"Ok": CallToolResult}` or `{"Err": "<message>"}` (protocol.md §1).
LLMX_TAGGED(McpToolCallEndEvent, "mcp_tool_call_end", std::string call_id; McpInvocation invocation;
           Duration duration; RawJson result;
           LLMX_FIELDS(v("call_id", s.call_id); v("invocation", s.invocation); v("duration", s.duration);
                       v("result", s.result)))

// llmx: a server's progress notification for a running call.
LLMX_TAGGED(McpToolCallProgressEvent, "mcp_tool_call_progress", std::string call_id; std::string message;
           LLMX_FIELDS(v("call_id", s.call_id); v("message", s.message)))

// A configured server's start-up: `status` is {"state":"starting"|"ready"|"failed"}, with
// `tools` (the number offered) when ready and `error` when failed.
struct McpStartupStatus {
  std::string state;
  std::optional<uint64_t> tools;
  std::optional<std::string> error;
  LLMX_FIELDS(v("state", s.state); v("tools", s.tools); v("error", s.error))
};
LLMX_TAGGED(McpStartupUpdateEvent, "mcp_startup_update", std::string server; McpStartupStatus status;
           LLMX_FIELDS(v("server", s.server); v("status", s.status)))

struct McpStartupFailure {
  std::string server;
  std::string error;
  LLMX_FIELDS(v("server", s.server); v("error", s.error))
};
LLMX_TAGGED(McpStartupCompleteEvent, "mcp_startup_complete", std::vector<std::string> ready;
           std::vector<McpStartupFailure> failed; std::vector<std::string> cancelled;
           LLMX_FIELDS(v("ready", s.ready); v("failed", s.failed); v("cancelled", s.cancelled)))

// A configured server asks the user for input (its elicitation/create). Answered with the
// `resolve_elicitation` op naming the same server and id. `requested_schema` (llmx) is the form.
LLMX_TAGGED(ElicitationRequestEvent, "elicitation_request", std::string server_name; std::string id;
           std::string message; RawJson requested_schema;
           LLMX_FIELDS(v("server_name", s.server_name); v("id", s.id); v("message", s.message);
                       v("requested_schema", s.requested_schema)))

// The answer to `list_mcp_tools`: every offered tool by qualified name (MCP's own Tool object).
LLMX_TAGGED(McpListToolsResponseEvent, "mcp_list_tools_response", std::map<std::string, RawJson> tools;
           std::map<std::string, RawJson> resources; std::map<std::string, RawJson> resource_templates;
           std::map<std::string, std::string> auth_statuses;
           LLMX_FIELDS(v("tools", s.tools); v("resources", s.resources);
                       v("resource_templates", s.resource_templates); v("auth_statuses", s.auth_statuses)))

LLMX_TAGGED(DeprecationNoticeEvent, "deprecation_notice", std::string summary;
           std::optional<std::string> details;
           LLMX_FIELDS(v("summary", s.summary); v("details", s.details)))

// The last `num_turns` turns were dropped from the thread's history (thread/rollback). Nothing is
// deleted from the rollout: every reader applies this marker (rollout::load, the v2 turn list).
LLMX_TAGGED(ThreadRolledBackEvent, "thread_rolled_back", uint32_t num_turns = 0;
           LLMX_FIELDS(v("num_turns", s.num_turns)))

// The thread's user-given title (thread/name/set); absent: the title was cleared.
LLMX_TAGGED(ThreadNameUpdatedEvent, "thread_name_updated", std::string thread_id;
           std::optional<std::string> thread_name;
           LLMX_FIELDS(v("thread_id", s.thread_id); v("thread_name", s.thread_name)))

using EventMsg = OneOf<
    ErrorEvent, WarningEvent, StreamErrorEvent, BackgroundEvent, TaskStartedEvent,
    TaskCompleteEvent, TokenCountEvent, AgentMessageEvent, UserMessageEvent, AgentMessageDeltaEvent,
    AgentReasoningEvent, AgentReasoningDeltaEvent, AgentReasoningRawContentEvent,
    AgentReasoningRawContentDeltaEvent, AgentReasoningSectionBreakEvent, SessionConfiguredEvent,
    ExecCommandBeginEvent, ExecCommandOutputDeltaEvent, ExecCommandEndEvent,
    ExecApprovalRequestEvent, ApplyPatchApprovalRequestEvent, PatchApplyBeginEvent,
    PatchApplyEndEvent, TurnDiffEvent, PlanUpdateEvent, TurnAbortedEvent, ShutdownCompleteEvent,
    RawResponseItemEvent, ItemStartedEvent, ItemCompletedEvent, AgentMessageContentDeltaEvent,
    ReasoningContentDeltaEvent, ReasoningRawContentDeltaEvent, DeprecationNoticeEvent,
    McpToolCallBeginEvent, McpToolCallEndEvent, McpToolCallProgressEvent, McpStartupUpdateEvent,
    McpStartupCompleteEvent, McpListToolsResponseEvent, ElicitationRequestEvent, ThreadRolledBackEvent,
    ThreadNameUpdatedEvent>;

// `{"id": <submission id>, "msg": EventMsg}`.
struct Event {
  Event() = default;
  // Constructed, not aggregate, so a batch's vector builds it in place (emplace_back): each move
  // of the wide EventMsg variant visits it.
  Event(std::string id_, EventMsg&& msg_) : id(std::move(id_)), msg(std::move(msg_)) {}
  Event(std::string id_, const EventMsg& msg_) : id(std::move(id_)), msg(msg_) {}
  std::string id;
  EventMsg msg;
  LLMX_FIELDS(v("id", s.id); v("msg", s.msg))
};

}  // namespace llmx
