// Params and results of the conversation methods the MCP server serves besides its tools
// (DECISIONS P1; protocol.md §3): stored threads, default model, model list. Plain structs, one
// field list each; the wire spellings are the reference's (camelCase, `origin_url` kept).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/config/config.hpp"
#include "protocol/core/event_msgs.hpp"
#include "protocol/core/items.hpp"
#include "protocol/model/model_catalog.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/base/reflect.hpp"

namespace llmx::rpc {
struct Encoder;
}  // namespace llmx::rpc

namespace llmx::api {

// `config` objects of dotted keys → the loader's JSON overrides; throws json::DecodeError when
// the value is not an object.
std::vector<std::pair<std::string, RawJson>> dotted_overrides(const RawJson& config);

// NewConversationParams (also resumeConversation.overrides); every key optional.
struct NewConversationParams {
  Nullable<std::string> model, modelProvider, profile, cwd;
  Nullable<AskForApproval> approvalPolicy;
  Nullable<SandboxMode> sandbox;
  Nullable<RawJson> config;
  Nullable<std::string> baseInstructions, developerInstructions, compactPrompt;
  Nullable<bool> includeApplyPatchTool;
  LLMX_FIELDS(v("model", s.model); v("modelProvider", s.modelProvider); v("profile", s.profile);
              v("cwd", s.cwd); v("approvalPolicy", s.approvalPolicy); v("sandbox", s.sandbox);
              v("config", s.config); v("baseInstructions", s.baseInstructions);
              v("developerInstructions", s.developerInstructions); v("compactPrompt", s.compactPrompt);
              v("includeApplyPatchTool", s.includeApplyPatchTool))
  // Layered over the server's own overrides (these win key by key).
  ConfigOverrides to_overrides(ConfigOverrides base = {}) const;
};

struct ListConversationsParams {
  Nullable<int64_t> pageSize;
  Nullable<std::string> cursor;
  Nullable<std::vector<std::string>> modelProviders;
  // llmx: only threads started from these sources ("cli", "exec", "mcp", "vscode", ...);
  // omitted, null or [] = every source (DECISIONS P11 lists MCP and exec sessions too).
  Nullable<std::vector<std::string>> sources;
  LLMX_FIELDS(v("pageSize", s.pageSize); v("cursor", s.cursor); v("modelProviders", s.modelProviders);
              v("sources", s.sources))
};

struct GitInfoWire {
  Nullable<std::string> sha, branch, origin_url;
  LLMX_FIELDS(v("sha", s.sha); v("branch", s.branch); v("origin_url", s.origin_url))
};

struct ConversationSummary {
  std::string conversationId;
  std::string path;
  std::string preview;
  Nullable<std::string> timestamp;
  std::string modelProvider;
  std::string cwd;
  std::string cliVersion;
  JsonOf<SessionSource> source{"\"vscode\""};
  Nullable<GitInfoWire> gitInfo;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("path", s.path); v("preview", s.preview);
              v("timestamp", s.timestamp); v("modelProvider", s.modelProvider); v("cwd", s.cwd);
              v("cliVersion", s.cliVersion); v("source", s.source); v("gitInfo", s.gitInfo))
};

struct ListConversationsResult {
  std::vector<ConversationSummary> items;
  Nullable<std::string> nextCursor;
  LLMX_FIELDS(v("items", s.items); v("nextCursor", s.nextCursor))
};

struct ResumeConversationParams {
  Nullable<std::string> path, conversationId;
  Nullable<std::vector<ResponseItem>> history;
  Nullable<NewConversationParams> overrides;
  LLMX_FIELDS(v("path", s.path); v("conversationId", s.conversationId); v("history", s.history);
              v("overrides", s.overrides))
};

struct ResumeConversationResult {
  std::string conversationId;
  std::string model;
  Nullable<JsonOf<RecordedEvents>> initialMessages;
  std::string rolloutPath;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("model", s.model);
              v("initialMessages", s.initialMessages); v("rolloutPath", s.rolloutPath))
};

// The `sessionConfigured` notification resumeConversation sends before its reply.
struct SessionConfiguredNotification {
  std::string sessionId;
  std::string model;
  Nullable<std::string> reasoningEffort;
  int64_t historyLogId = 0;
  int64_t historyEntryCount = 0;
  Nullable<JsonOf<RecordedEvents>> initialMessages;
  std::string rolloutPath;
  LLMX_FIELDS(v("sessionId", s.sessionId); v("model", s.model); v("reasoningEffort", s.reasoningEffort);
              v("historyLogId", s.historyLogId); v("historyEntryCount", s.historyEntryCount);
              v("initialMessages", s.initialMessages); v("rolloutPath", s.rolloutPath))
};

struct ArchiveConversationParams {
  std::string conversationId;
  std::string rolloutPath;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("rolloutPath", s.rolloutPath))
};

// llmx: brings an archived conversation back into the listings.
struct UnarchiveConversationParams {
  std::string conversationId;
  LLMX_FIELDS(v("conversationId", s.conversationId))
};

struct UnarchiveConversationResult {
  std::string conversationId;
  std::string rolloutPath;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("rolloutPath", s.rolloutPath))
};

struct SetDefaultModelParams {
  Nullable<std::string> model, reasoningEffort;
  LLMX_FIELDS(v("model", s.model); v("reasoningEffort", s.reasoningEffort))
};

// `limit` (reference) and `pageSize` (seed) are both accepted (DECISIONS P8).
struct ModelListParams {
  Nullable<std::string> cursor;
  Nullable<int64_t> limit, pageSize;
  LLMX_FIELDS(v("cursor", s.cursor); v("limit", s.limit); v("pageSize", s.pageSize))
};

// --- the v1 conversation methods -----------------------------------------------------------------

// A v1 input item: `{"type":"text","data":{"text":…}}` (reference, adjacently tagged, camelCase
// variant names `text` / `image` / `localImage`) or the seed's flat `{"type":"text","text":…}`
// (DECISIONS P8). Written in the reference's form.
struct InputItem {
  UserInput item;
};
void write_json(json::Writer& w, const InputItem& x);
void read_json(json::Element e, InputItem& x);
schema::Node json_schema(const InputItem*, schema::Context& c);
std::vector<UserInput> to_user_inputs(const std::vector<InputItem>& items);

struct NewConversationResult {
  std::string conversationId;
  std::string model;
  Nullable<std::string> reasoningEffort;
  std::string rolloutPath;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("model", s.model);
              v("reasoningEffort", s.reasoningEffort); v("rolloutPath", s.rolloutPath))
};

struct SendUserMessageParams {
  std::string conversationId;
  std::vector<InputItem> items;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("items", s.items))
};

// All keys required except `effort` (DECISIONS: the reference's strictness is kept).
struct SendUserTurnParams {
  std::string conversationId;
  std::vector<InputItem> items;
  std::string cwd;
  AskForApproval approvalPolicy = AskForApproval::on_request;
  SandboxPolicy sandboxPolicy;
  std::string model;
  Nullable<std::string> effort;
  std::string summary = "auto";
  LLMX_FIELDS(v("conversationId", s.conversationId); v("items", s.items); v("cwd", s.cwd);
              v("approvalPolicy", s.approvalPolicy); v("sandboxPolicy", s.sandboxPolicy);
              v("model", s.model); v("effort", s.effort); v("summary", s.summary))
};

struct ConversationIdParams {
  std::string conversationId;
  LLMX_FIELDS(v("conversationId", s.conversationId))
};

struct InterruptConversationResult {
  TurnAbortReason abortReason = TurnAbortReason::interrupted;
  LLMX_FIELDS(v("abortReason", s.abortReason))
};

struct AddConversationListenerParams {
  std::string conversationId;
  Nullable<bool> experimentalRawEvents;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("experimentalRawEvents", s.experimentalRawEvents))
};

struct AddConversationListenerResult {
  std::string subscriptionId;
  LLMX_FIELDS(v("subscriptionId", s.subscriptionId))
};

struct RemoveConversationListenerParams {
  std::string subscriptionId;
  LLMX_FIELDS(v("subscriptionId", s.subscriptionId))
};

// `llmx/event/<type>` params (§3.4): the core event plus its conversation.
struct EventNotification {
  std::string id;
  EventMsg msg;
  std::string conversationId;
  LLMX_FIELDS(v("id", s.id); v("msg", s.msg); v("conversationId", s.conversationId))
};

// The `llmx/event/<type>` notification of `ev` for a listener of `conversation_id`, appended to
// `out` in place: params written straight from the event, the method built on the stack (a
// streamed delta allocates nothing here).
void append_event_notification(const rpc::Encoder& rpc, std::string& out, const Event& ev,
                               const std::string& conversation_id);

// `model/list` result: the MCP server answers `items` (seed), the app server `data`
// (reference), DECISIONS P8.
// llmx adds where the list comes from (`source`: "provider", its live list, or "builtin", the
// table llmx ships) and, when the table stands in or details are missing, a `note` saying why.
struct ModelListData {
  std::vector<models::ModelPreset> data;
  Nullable<std::string> nextCursor;
  std::optional<std::string> source, note;
  LLMX_FIELDS(v("data", s.data); v("nextCursor", s.nextCursor); v("source", s.source); v("note", s.note))
};
struct McpModelListResult {
  std::vector<models::ModelPreset> items;
  Nullable<std::string> nextCursor;
  std::optional<std::string> source, note;
  LLMX_FIELDS(v("items", s.items); v("nextCursor", s.nextCursor); v("source", s.source); v("note", s.note))
};
std::string model_list_result(std::vector<models::ModelPreset> items, const std::optional<std::string>& next_cursor,
                              bool data_key);

// Server → client approval requests of the v1 API (protocol.md §3.5).
struct ExecCommandApprovalParams {
  std::string conversationId;
  std::string callId;
  std::vector<std::string> command;
  std::string cwd;
  Nullable<std::string> reason;
  Nullable<SandboxCommandAssessment> risk;
  std::vector<ParsedCommand> parsedCmd;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("callId", s.callId); v("command", s.command);
              v("cwd", s.cwd); v("reason", s.reason); v("risk", s.risk); v("parsedCmd", s.parsedCmd))
};

struct ApplyPatchApprovalParams {
  std::string conversationId;
  std::string callId;
  std::map<std::string, FileChange> fileChanges;
  Nullable<std::string> reason;
  Nullable<std::string> grantRoot;
  LLMX_FIELDS(v("conversationId", s.conversationId); v("callId", s.callId); v("fileChanges", s.fileChanges);
              v("reason", s.reason); v("grantRoot", s.grantRoot))
};

// `mcpServer/elicitation/request`: a configured MCP server asks the user for input; the client
// answers an ElicitResult `{action: accept|decline|cancel, content?}`.
struct McpElicitationRequestParams {
  std::string threadId;
  std::string turnId;
  std::string serverName;
  std::string requestId;
  std::string mode = "form";
  std::string message;
  RawJson requestedSchema;
  LLMX_FIELDS(v("threadId", s.threadId); v("turnId", s.turnId); v("serverName", s.serverName);
              v("requestId", s.requestId); v("mode", s.mode); v("message", s.message);
              v("requestedSchema", s.requestedSchema))
};

}  // namespace llmx::api
