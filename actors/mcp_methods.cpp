// The MCP server's own methods (protocol.md §2, DECISIONS P1-P6): initialize, ping,
// logging/setLevel, tools/list, tools/call with the `llmx` and `llmx-reply` tools, and
// notifications/cancelled. Resources, prompts and completions are not declared, so their methods
// are -32601 like any other unknown method (MCP 2025-11-25: only negotiated capabilities). Their results are typed MCP
// results (protocol/rpc/mcp.hpp), bound as not exported: MCP's schema is its specification's.
#include "actors/session_state.hpp"

#include <fmt/format.h>

#include "protocol/base/ids.hpp"
#include "protocol/base/log.hpp"
#include "protocol/rpc/mcp.hpp"
#include "transport/curl_api.hpp"

namespace llmx::session_detail {

namespace {

using ToolReply = Reply<mcp::CallToolResult>;


void start_turn(session_ptr self, const rpc::Id& id, const std::string& conv_id, conversation_actor conv,
                std::string prompt, std::optional<RawJson> progress, std::string sub_id) {
  const auto& call = self->state.tool_calls.start(id, conv_id, conv, sub_id, std::move(progress));
  remember(self, conv_id, conv);
  subscribe(self, conv);
  // A client that declared no elicitation cannot answer approvals: the policy decides alone.
  UserInputOp input{{TextInput{std::move(prompt)}}, self->state.client_caps.elicitation_form};
  caf::anon_send(conv, submit_atom::value, Submission{sub_id, std::move(input)});
  // Cancelled before its conversation was ready: interrupted as soon as it starts.
  if (call.cancelled) caf::anon_send(conv, submit_atom::value, Submission{sub_id, InterruptOp{}});
}

std::optional<RawJson> progress_token(const mcp::ToolCallParams& params) {
  if (params._meta && !params._meta->progressToken.is_null()) return params._meta->progressToken;
  return std::nullopt;
}

void llmx_tool(session_ptr self, const mcp::ToolCallParams& params, const ToolReply& reply) {
  if (!params.arguments || params.arguments->is_null())
    return reply(mcp::tool_error("Missing arguments for llmx tool-call; the `prompt` field is required."));
  mcp::LlmxToolArgs args;
  Config cfg;
  try {
    args = json::parse_as<mcp::LlmxToolArgs>(params.arguments->text);
    cfg = resolve_config(self, args.to_overrides());
  } catch (const json::DecodeError& err) {
    return reply(mcp::tool_error(fmt::format("Failed to parse configuration for LLMX tool: {}", err.what())));
  } catch (const ConfigError& err) {
    return reply(mcp::tool_error(fmt::format("Failed to load LLMX configuration from overrides: {}", err.what())));
  }
  cfg.session_source = "mcp";
  auto progress = progress_token(params);
  auto id = reply.id();
  self->state.tool_calls.starting(id);
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent sc) mutable {
            auto conv_id = sc.session_id;
            notify(self, "llmx/event", mcp::event_params(id, Event{"", std::move(sc)}));
            start_turn(self, id, conv_id, conv, args.prompt, progress, id.as_plain_string());
          },
          [=](caf::error& err) {
            self->state.tool_calls.abandon(id);
            reply(mcp::tool_error("Failed to start LLMX session: " + self->system().render(err)));
          });
}

void reply_tool(session_ptr self, const mcp::ToolCallParams& params, const ToolReply& reply) {
  if (!params.arguments || params.arguments->is_null())
    return reply(mcp::tool_error("Missing arguments for llmx-reply tool-call; the `conversationId` and "
                                         "`prompt` fields are required."));
  mcp::ReplyToolArgs args;
  try {
    args = json::parse_as<mcp::ReplyToolArgs>(params.arguments->text);
  } catch (const json::DecodeError& err) {
    return reply(mcp::tool_error(fmt::format("Failed to parse configuration for LLMX tool: {}", err.what())));
  }
  if (!is_uuid(args.conversationId))
    return reply(mcp::tool_error("Failed to parse conversation_id: not a UUID: " + args.conversationId));
  if (auto* running = self->state.tool_calls.running(args.conversationId))
    return reply(mcp::tool_error(fmt::format("Conversation {} is already running a turn (request {}); wait "
                                                     "for it to finish or cancel it first.",
                                                     args.conversationId, running->request_id.json)));
  auto progress = progress_token(params);
  auto id = reply.id();
  auto conv_id = args.conversationId;
  self->state.tool_calls.starting(id);
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, conv_id)
      .then(
          [=](conversation_actor conv) {
            start_turn(self, id, conv_id, conv, args.prompt, progress, id.as_plain_string());
          },
          [=](caf::error&) {
            self->state.tool_calls.abandon(id);
            reply(mcp::tool_error("Session not found for conversation_id: " + conv_id));
          });
}

void tools_call(session_ptr self, mcp::ToolCallParams p, ToolReply reply) {
  if (self->state.shutting_down) return reply(mcp::tool_error("The server is shutting down."));
  if (p.name == "llmx") return llmx_tool(self, p, reply);
  if (p.name == "llmx-reply") return reply_tool(self, p, reply);
  reply(RpcError{rpc::kInvalidParams, fmt::format("Unknown tool: {}", p.name)});
}

void initialize(session_ptr self, mcp::InitializeParams p, Reply<mcp::InitializeResult> reply) {
  auto& st = self->state;
  if (st.initialized) return reply(RpcError{rpc::kInvalidRequest, "initialize called more than once"});
  st.initialized = true;
  st.client_suffix = p.clientInfo.name + "; " + p.clientInfo.version;
  st.client_caps = mcp::read_client_capabilities(p.capabilities);
  reply(mcp::InitializeResult{mcp::negotiate_version(p.protocolVersion), user_agent(st.client_suffix)});
  // Load libcurl now, off the initialize path, so the first turn does not wait for it.
  http::preload_curl_async();
}

void set_level(session_ptr, mcp::SetLevelParams p, Reply<Empty> reply) {
  if (!log::set_level(p.level))
    return reply(RpcError{rpc::kInvalidParams, fmt::format("Invalid params: unknown log level `{}`", p.level)});
  reply(Empty{});
}

void ping(session_ptr, RawJson, Reply<Empty> reply) { reply(Empty{}); }
void tools_list(session_ptr, RawJson, Reply<mcp::ToolsListResult> reply) { reply(mcp::ToolsListResult{}); }

// notifications/cancelled: a call still starting is cancelled as soon as it starts; a running
// one is interrupted (its request then gets no reply, P6).
void cancelled(session_ptr self, mcp::CancelledParams p) {
  if (auto call = self->state.tool_calls.cancel(p.requestId.text))
    caf::anon_send(call->conversation, submit_atom::value, Submission{call->sub_id, InterruptOp{}});
}

}  // namespace

void bind_mcp_methods(Methods& t) {
  constexpr auto mcp = rpc::Export::no;
  t.bind<mcp::InitializeParams, mcp::InitializeResult>("initialize", initialize, mcp);
  t.bind<RawJson, Empty>("ping", ping, mcp);
  t.bind<mcp::SetLevelParams, Empty>("logging/setLevel", set_level, mcp);
  t.bind<RawJson, mcp::ToolsListResult>("tools/list", tools_list, mcp);
  t.bind<mcp::ToolCallParams, mcp::CallToolResult>("tools/call", tools_call, mcp);
  t.on<mcp::CancelledParams>("notifications/cancelled", cancelled);
}

}  // namespace llmx::session_detail
