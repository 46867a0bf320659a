// The MCP server's wire types (protocol.md §2, DECISIONS P1–P6): initialize, the `llmx` and
// `llmx-reply` tools, event notifications and tool results.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/config/config.hpp"
#include "protocol/core/events.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/rpc/jsonrpc.hpp"

namespace llmx::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";

struct ClientInfo {
  std::string name;
  std::string version;
  std::optional<std::string> title;
  LLMX_FIELDS(v("name", s.name); v("version", s.version); v("title", s.title))
};

struct InitializeParams {
  std::string protocolVersion;
  RawJson capabilities;
  ClientInfo clientInfo;
  LLMX_FIELDS(v("protocolVersion", s.protocolVersion); v("capabilities", s.capabilities);
              v("clientInfo", s.clientInfo))
};

// What a client declared it can do (initialize's `capabilities`, kept for the session; 2026-07-28
// sends them with every request). Only what changes our behaviour is kept.
struct ClientCapabilities {
  bool elicitation_form = false;  // `elicitation: {}` or `{form: {}}`: elicitation/create may be sent
  bool elicitation_url = false;   // `elicitation: {url: {}}`
  bool tasks = false;             // `tasks` declared (the client can poll tasks it is given)
};
// Reads a `capabilities` object; anything malformed counts as not declared.
ClientCapabilities read_client_capabilities(const RawJson& capabilities);

// The version we answer with: the client's when we speak it, else our latest.
std::string negotiate_version(const std::string& requested);
// Whether a negotiated version has tasks (2025-11-25 on).
inline bool has_tasks(std::string_view version) { return version >= "2025-11-25"; }

// `object` (a JSON object without `_meta`) with `"_meta": meta` added.
std::string with_meta(std::string_view object, std::string_view meta);

// A result as 2026-07-28 wants every result: `resultType` ("complete" unless the object starts
// with its own) and our serverInfo in `_meta`. `object` is a JSON object without `_meta`.
std::string stateless_result(std::string_view object);

// How to use llmx's tools, for the host's model (initialize's `instructions`).
std::string_view server_instructions();

// The initialize result: our capabilities and serverInfo at the negotiated version.
struct InitializeResult {
  std::string protocol_version;
  std::string user_agent;
  bool tasks = false;  // the `tasks` capability (tool calls as tasks; list; cancel)
};
void write_json(json::Writer& w, const InitializeResult& x);

// `tools/list` result: both tools with input and output schemas (P5); `tasks`: they may be
// called as tasks (`execution.taskSupport: "optional"`).
struct ToolsListResult {
  bool tasks = false;
};
void write_json(json::Writer& w, const ToolsListResult&);

struct SetLevelParams {
  std::string level;
  LLMX_FIELDS(v("level", s.level))
};

struct CallMeta {
  RawJson progressToken;
  LLMX_FIELDS(v("progressToken", s.progressToken))
};

// `task` in tools/call params (2025-11-25): the retention the client asks for.
struct CallTask {
  std::optional<int64_t> ttl;
  LLMX_FIELDS(v("ttl", s.ttl))
};

struct ToolCallParams {
  std::string name;
  std::optional<RawJson> arguments;
  std::optional<CallMeta> _meta;
  std::optional<CallTask> task;
  LLMX_FIELDS(v("name", s.name); v("arguments", s.arguments); v("_meta", s._meta); v("task", s.task))
};

// Arguments of the `llmx` tool (kebab-case keys).
struct LlmxToolArgs {
  std::string prompt;
  std::optional<std::string> model, profile, cwd;
  std::optional<AskForApproval> approval_policy;
  std::optional<SandboxMode> sandbox;
  std::optional<RawJson> config;
  std::optional<std::string> base_instructions, developer_instructions, compact_prompt;
  LLMX_FIELDS(v("prompt", s.prompt); v("model", s.model); v("profile", s.profile); v("cwd", s.cwd);
              v("approval-policy", s.approval_policy); v("sandbox", s.sandbox); v("config", s.config);
              v("base-instructions", s.base_instructions);
              v("developer-instructions", s.developer_instructions);
              v("compact-prompt", s.compact_prompt))

  // The overrides these arguments stand for; throws json::DecodeError for a bad `config`.
  ConfigOverrides to_overrides() const;
};

struct ReplyToolArgs {
  std::string conversationId;
  std::string prompt;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("prompt", s.prompt))
};

// `{"_meta":{"requestId":<id>},"id":...,"msg":...}` for the `llmx/event` notification.
// `task_id`: the task the call runs as (related-task `_meta`, 2025-11-25).
std::string event_params(const rpc::Id& request_id, const Event& ev, const std::string& task_id = {});
void write_event_params(json::Writer& w, const rpc::Id& request_id, const Event& ev, const std::string& task_id = {});

// `notifications/cancelled` params: the request the client gave up on.
struct CancelledParams { RawJson requestId; LLMX_FIELDS(v("requestId", s.requestId)) };

// `notifications/progress` params (P6): the call's token, a value that increases, and what the
// turn does now (mcp_progress.hpp).
std::string progress_params(const RawJson& token, uint64_t progress, const std::string& message,
                            const std::string& task_id = {});

// A CallToolResult: a text block, plus structuredContent {threadId, content} when it comes from a
// conversation (P5); only an error text for a call that never reached one (bad arguments...).
//
// A call made as a task answers a CreateTaskResult instead (`created_task`: the Task's fields as
// a JSON object), and tasks/result the outcome tagged with its task (`related_task`).
struct CallToolResult {
  std::string text = {};
  bool is_error = false;
  std::optional<std::string> thread_id = {};
  std::optional<std::string> created_task = {};
  std::optional<std::string> related_task = {};
};
void write_json(json::Writer& w, const CallToolResult& x);
inline CallToolResult tool_result(const std::string& thread_id, const std::string& text, bool is_error) {
  return {.text = text, .is_error = is_error, .thread_id = thread_id};
}
inline CallToolResult tool_error(const std::string& text) { return {.text = text, .is_error = true}; }
// Why a call cannot start a turn in a conversation that is running one.
std::string busy_conversation(const std::string& conversation_id);

// What ties an elicitation/create to its call: the llmx_* correlation fields of the reference
// (`_meta` from 2025-11-25 on, top-level params before, as the reference sent them) and the
// task the call runs as (related-task `_meta`).
struct ElicitationTag {
  rpc::Id tool_call_id;
  std::string event_id;
  std::string task_id = {};
  bool in_meta = true;  // 2025-11-25 on: llmx_* in `_meta` and `mode: "form"`
};

// `elicitation/create` params for an approval event (DECISIONS P4): a message, a real
// requestedSchema (a decision enum) and the correlation fields.
std::string exec_elicitation_params(const ExecApprovalRequestEvent& ev, const ElicitationTag& tag,
                                    const std::string& command_text);
std::string patch_elicitation_params(const ApplyPatchApprovalRequestEvent& ev, const ElicitationTag& tag);

// `elicitation/create` params forwarding a configured server's own elicitation to our host: its
// message and form, with the correlation fields (`llmx_elicitation: "mcp-elicitation"`).
std::string forwarded_elicitation_params(const ElicitationRequestEvent& ev, const ElicitationTag& tag);

// The fields of an elicitation reply: `{action, content: {decision}}` (standard) or the legacy
// `{decision}`. What they mean is decided in sandbox/approval.hpp.
struct ElicitationReply {
  std::optional<std::string> action;            // accept | decline | cancel
  std::optional<std::string> content_decision;  // content.decision
  std::optional<std::string> decision;          // legacy top-level decision
  std::optional<std::string> content;           // content as JSON text (a forwarded form's values)
};
ElicitationReply read_elicitation_reply(json::Element result);

}  // namespace llmx::mcp
