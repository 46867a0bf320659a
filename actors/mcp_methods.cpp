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
#include "protocol/rpc/mcp_tasks.hpp"
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

// A call made as a task (2025-11-25, when negotiated and this server has a task board): the
// board runs its turn and the call is answered at once with the task.
bool as_task(session_ptr self, const mcp::ToolCallParams& params) {
  const auto& st = self->state;
  return params.task && st.options.tasks && mcp::has_tasks(st.protocol_version);
}

void start_task(session_ptr self, const ToolReply& reply, const std::string& conv_id, conversation_actor conv,
                std::string prompt, std::optional<RawJson> progress, std::optional<int64_t> ttl) {
  auto& st = self->state;
  remember(self, conv_id, conv);
  bool can_elicit = st.client_caps.elicitation_form;
  TaskStart start{st.options.principal, ttl, conv_id, reply.id().json, std::move(progress), can_elicit,
                  UserInputOp{{TextInput{std::move(prompt)}}, can_elicit}};
  self->request(st.options.tasks, caf::infinite, std::move(start), conv, caf::actor_cast<session_actor>(self))
      .then([=](std::string& task) { reply(mcp::CallToolResult{.created_task = std::move(task)}); },
            [=](caf::error& err) { reply(RpcError{rpc::kInvalidParams, error_text(err)}); });
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
  bool task = as_task(self, params);
  auto ttl = params.task ? params.task->ttl : std::nullopt;
  if (!task) self->state.tool_calls.starting(id);
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent sc) mutable {
            auto conv_id = sc.session_id;
            notify(self, "llmx/event", mcp::event_params(id, Event{"", std::move(sc)}));
            if (task) return start_task(self, reply, conv_id, conv, args.prompt, progress, ttl);
            start_turn(self, id, conv_id, conv, args.prompt, progress, id.as_plain_string());
          },
          [=](caf::error& err) {
            if (!task) self->state.tool_calls.abandon(id);
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
  bool task = as_task(self, params);
  auto ttl = params.task ? params.task->ttl : std::nullopt;
  if (!task) self->state.tool_calls.starting(id);
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, conv_id)
      .then(
          [=](conversation_actor conv) {
            if (task) return start_task(self, reply, conv_id, conv, args.prompt, progress, ttl);
            start_turn(self, id, conv_id, conv, args.prompt, progress, id.as_plain_string());
          },
          [=](caf::error&) {
            if (!task) self->state.tool_calls.abandon(id);
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
  st.protocol_version = mcp::negotiate_version(p.protocolVersion);
  bool tasks = st.options.tasks && mcp::has_tasks(st.protocol_version);
  reply(mcp::InitializeResult{st.protocol_version, user_agent(st.client_suffix), tasks});
  // Load libcurl now, off the initialize path, so the first turn does not wait for it.
  http::preload_curl_async();
}

void set_level(session_ptr, mcp::SetLevelParams p, Reply<Empty> reply) {
  if (!log::set_level(p.level))
    return reply(RpcError{rpc::kInvalidParams, fmt::format("Invalid params: unknown log level `{}`", p.level)});
  reply(Empty{});
}

void ping(session_ptr, RawJson, Reply<Empty> reply) { reply(Empty{}); }
void tools_list(session_ptr self, RawJson, Reply<mcp::ToolsListResult> reply) {
  reply(mcp::ToolsListResult{self->state.options.tasks && mcp::has_tasks(self->state.protocol_version)});
}

// tasks/*: the board answers (it outlives this session); this session gets the task's messages.
void ask_board(session_ptr self, TaskQuery q, const Reply<RawJson>& reply) {
  const auto& st = self->state;
  if (!st.options.tasks || !mcp::has_tasks(st.protocol_version))
    return reply(RpcError{rpc::kMethodNotFound, "Method not found: " + q.method});
  q.owner = st.options.principal;
  self->request(st.options.tasks, caf::infinite, std::move(q), caf::actor_cast<session_actor>(self))
      .then([=](std::string& result) { reply(RawJson{std::move(result)}); },
            [=](caf::error& err) {
              reply(is_request_error(err) ? RpcError{rpc::kInvalidParams, error_text(err)}
                                          : RpcError{rpc::kInternalError, error_text(err)});
            });
}

void tasks_get(session_ptr self, mcp::TaskIdParams p, Reply<RawJson> reply) {
  ask_board(self, TaskQuery{"tasks/get", "", p.taskId, std::nullopt}, reply);
}
void tasks_result(session_ptr self, mcp::TaskIdParams p, Reply<RawJson> reply) {
  ask_board(self, TaskQuery{"tasks/result", "", p.taskId, std::nullopt}, reply);
}
void tasks_cancel(session_ptr self, mcp::TaskIdParams p, Reply<RawJson> reply) {
  ask_board(self, TaskQuery{"tasks/cancel", "", p.taskId, std::nullopt}, reply);
}
void tasks_list(session_ptr self, mcp::TaskListParams p, Reply<RawJson> reply) {
  ask_board(self, TaskQuery{"tasks/list", "", "", p.cursor}, reply);
}

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
  t.bind<mcp::TaskIdParams, RawJson>("tasks/get", tasks_get, mcp);
  t.bind<mcp::TaskIdParams, RawJson>("tasks/result", tasks_result, mcp);
  t.bind<mcp::TaskListParams, RawJson>("tasks/list", tasks_list, mcp);
  t.bind<mcp::TaskIdParams, RawJson>("tasks/cancel", tasks_cancel, mcp);
  t.on<mcp::CancelledParams>("notifications/cancelled", cancelled);
}

}  // namespace llmx::session_detail
