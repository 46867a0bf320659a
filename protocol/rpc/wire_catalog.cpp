#include "protocol/rpc/wire_catalog.hpp"

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/rpc/exec_events.hpp"
#include "protocol/rpc/mcp.hpp"
#include "protocol/core/ops.hpp"

namespace llmx::schema {

namespace {

// The JSON-RPC envelope of the app server (protocol.md §1.2: no "jsonrpc" key). Framing, not
// reflected structs, so written out here.
void add_framing(Registry& reg) {
  reg.add_node("RequestId", Dir::root, any_of({string(), integer()}));
  reg.add_node("JSONRPCErrorError", Dir::root,
               object({prop("code", integer()), prop("message", string()), optional_prop("data", any())}));
  reg.add_node("JSONRPCRequest", Dir::root,
               object({prop("id", ref("RequestId")), prop("method", string()), optional_prop("params", any())}));
  reg.add_node("JSONRPCNotification", Dir::root,
               object({prop("method", string()), optional_prop("params", any())}));
  reg.add_node("JSONRPCResponse", Dir::root, object({prop("id", ref("RequestId")), prop("result", any())}));
  // The id is null when the request's own id could not be read (malformed line, DECISIONS P2).
  reg.add_node("JSONRPCError", Dir::root,
               object({prop("id", nullable(ref("RequestId"))), prop("error", ref("JSONRPCErrorError"))}));
  reg.add_node("JSONRPCMessage", Dir::root,
               any_of({ref("JSONRPCRequest"), ref("JSONRPCNotification"), ref("JSONRPCResponse"),
                       ref("JSONRPCError")}));
}

// The core event model (protocol.md §5): events, submissions, items, policies.
void add_core(Registry& reg) {
  reg.add<Event>("Event", Dir::root);
  reg.add<EventMsg>("EventMsg", Dir::root);
  reg.add<Submission>("Submission", Dir::root);
  reg.add<Op>("Op", Dir::root);
  reg.add<ResponseItem>("ResponseItem", Dir::root);
  reg.add<ContentItem>("ContentItem", Dir::root);
  reg.add<UserInput>("UserInput", Dir::root);
  reg.add<FileChange>("FileChange", Dir::root);
  reg.add<ParsedCommand>("ParsedCommand", Dir::root);
  reg.add<TurnItem>("TurnItem", Dir::root);
  reg.add<SandboxPolicy>("SandboxPolicy", Dir::root);
  reg.add<SandboxMode>("SandboxMode", Dir::root);
  reg.add<AskForApproval>("AskForApproval", Dir::root);
  reg.add<ReviewDecision>("ReviewDecision", Dir::root);
}

// The MCP server's own params (protocol.md §2); prefixed where the app server has a namesake.
void add_mcp(Registry& reg) {
  reg.add<mcp::ClientInfo>("McpClientInfo", Dir::root);
  reg.add<mcp::InitializeParams>("McpInitializeParams", Dir::root);
  reg.add<mcp::SetLevelParams>("McpSetLevelParams", Dir::root);
  reg.add<mcp::CallMeta>("McpCallMeta", Dir::root);
  reg.add<mcp::ToolCallParams>("McpToolCallParams", Dir::root);
  reg.add<mcp::LlmxToolArgs>("LlmxToolCallParam", Dir::root);
  reg.add<mcp::ReplyToolArgs>("LlmxToolCallReplyParam", Dir::root);
}

// The app server's conversation ("v1") API (protocol.md §3) and the v2 methods served so far.
void add_app_server(Registry& reg) {
  reg.add<api::InputItem>("InputItem", Dir::v1);
  reg.add<api::NewConversationParams>("NewConversationParams", Dir::v1);
  reg.add<api::NewConversationResult>("NewConversationResponse", Dir::v1);
  reg.add<api::ListConversationsParams>("ListConversationsParams", Dir::v1);
  reg.add<api::ListConversationsResult>("ListConversationsResponse", Dir::v1);
  reg.add<api::ConversationSummary>("ConversationSummary", Dir::v1);
  reg.add<api::GitInfoWire>("ConversationGitInfo", Dir::v1);
  reg.add<api::ResumeConversationParams>("ResumeConversationParams", Dir::v1);
  reg.add<api::ResumeConversationResult>("ResumeConversationResponse", Dir::v1);
  reg.add<api::ArchiveConversationParams>("ArchiveConversationParams", Dir::v1);
  reg.add<api::UnarchiveConversationParams>("UnarchiveConversationParams", Dir::v1);
  reg.add<api::UnarchiveConversationResult>("UnarchiveConversationResponse", Dir::v1);
  reg.add<api::SendUserMessageParams>("SendUserMessageParams", Dir::v1);
  reg.add<api::SendUserTurnParams>("SendUserTurnParams", Dir::v1);
  reg.add<api::ConversationIdParams>("ConversationIdParams", Dir::v1);
  reg.add<api::InterruptConversationResult>("InterruptConversationResponse", Dir::v1);
  reg.add<api::AddConversationListenerParams>("AddConversationListenerParams", Dir::v1);
  reg.add<api::AddConversationListenerResult>("AddConversationListenerResponse", Dir::v1);
  reg.add<api::RemoveConversationListenerParams>("RemoveConversationListenerParams", Dir::v1);
  reg.add<api::SetDefaultModelParams>("SetDefaultModelParams", Dir::v1);
  reg.add<api::SessionConfiguredNotification>("SessionConfiguredNotification", Dir::v1);
  reg.add<api::ExecCommandApprovalParams>("ExecCommandApprovalParams", Dir::v1);
  reg.add<api::ApplyPatchApprovalParams>("ApplyPatchApprovalParams", Dir::v1);
  reg.add<api::ModelListParams>("ModelListParams", Dir::v2);

  // Method unions (the ClientRequest union comes from the serving method table).
  reg.notification("ClientNotification", "initialized");
  reg.request<api::ExecCommandApprovalParams>("ServerRequest", "execCommandApproval");
  reg.request<api::ApplyPatchApprovalParams>("ServerRequest", "applyPatchApproval");
  // `llmx exec --json`: one of these per line (the Codex SDK's contract).
  reg.add_node("ExecThreadEvent", Dir::root, exec_events::json_schema());
  reg.add<api::McpElicitationRequestParams>("McpServerElicitationRequestParams", Dir::v2);
  reg.request<api::McpElicitationRequestParams>("ServerRequest", "mcpServer/elicitation/request");
  reg.notification<api::SessionConfiguredNotification>("ServerNotification", "sessionConfigured");
}

}  // namespace

// wire_catalog_v2.cpp, wire_catalog_methods.cpp
void add_v2_catalog(Registry& reg);
void add_method_catalog(Registry& reg);

Registry wire_catalog(const RequestExport& client_requests) {
  Registry reg;
  add_framing(reg);
  add_core(reg);
  add_mcp(reg);
  add_app_server(reg);
  add_v2_catalog(reg);
  add_method_catalog(reg);
  client_requests(reg, "ClientRequest");
  return reg;
}

void write_json_schema_bundle(const std::string& out_dir, const RequestExport& client_requests) {
  write_files(out_dir, json_schema_files(wire_catalog(client_requests)));
}

void write_typescript(const std::string& out_dir, const RequestExport& client_requests) {
  write_files(out_dir, typescript_files(wire_catalog(client_requests)));
}

std::string bundle_json(const RequestExport& client_requests) { return schema::bundle_json(wire_catalog(client_requests)); }

}  // namespace llmx::schema
