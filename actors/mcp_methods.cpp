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

void accept_handshake(session_ptr self, rpc::McpHandshake h) {
  auto& st = self->state;
  st.initialized = true;
  st.client_suffix = std::move(h.client_suffix);
  st.client_caps = h.client_caps;
  st.protocol_version = std::move(h.protocol_version);
  // Load libcurl now, off the initialize path, so the first turn does not wait for it.
  http::preload_curl_async();
}

namespace {

using ToolReply = Reply<mcp::CallToolResult>;


void start_turn(session_ptr self, const ToolReply& reply, const std::string& conv_id, conversation_actor conv,
                std::string prompt, std::optional<RawJson> progress) {
  auto id = reply.id();
  auto sub_id = id.as_plain_string();
  // An earlier call of this client still runs there: refused at once, and that call keeps its answer.
  if (!self->state.tool_calls.start(id, conv_id, conv, sub_id, std::move(progress)))
    return reply(mcp::tool_error(mcp::busy_conversation(conv_id)));
  remember(self, conv_id, conv);
  subscribe(self, conv);
  // A client that declared no elicitation cannot answer approvals: the policy decides alone.
  UserInputOp input{{TextInput{std::move(prompt)}}, self->state.client_caps.elicitation_form, true};
  self->request(conv, caf::infinite, submit_atom::value, Submission{sub_id, std::move(input)})
      .then(
          [=](const std::string& accepted) {
            if (accepted.empty()) {  // another client's turn (a task) runs there: this call gets none
              self->state.tool_calls.drop(conv_id);
              return reply(mcp::tool_error(mcp::busy_conversation(conv_id)));
            }
            // Cancelled before its conversation was ready: interrupted as soon as it starts.
            if (auto* call = self->state.tool_calls.running(conv_id); call && call->cancelled)
              caf::anon_send(conv, submit_atom::value, Submission{sub_id, InterruptOp{}});
          },
          [=](caf::error&) {});  // a conversation that ends: conversation_ended answers the call
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
  TaskStart start{.owner = st.options.principal, .ttl_ms = ttl, .conversation_id = conv_id,
                  .request_id = reply.id().json, .progress_token = std::move(progress), .can_elicit = can_elicit,
                  .input = UserInputOp{{TextInput{std::move(prompt)}}, can_elicit}};
  self->request(st.options.tasks, caf::infinite, std::move(start), conv, caf::actor_cast<session_actor>(self))
      .then([=](mcp::TaskView& task) { reply(mcp::CallToolResult{.created_task = mcp::task_2025(task)}); },
            [=](caf::error& err) { reply(board_error(err)); });
}

std::optional<RawJson> progress_token(const mcp::ToolCallParams& params) {
  if (params._meta && !params._meta->progressToken.is_null()) return params._meta->progressToken;
  return std::nullopt;
}

// How a call that cannot start is answered: a tool error result, or — for a call made as a
// task, whose answer must be a task — a JSON-RPC error (-32602).
CallFail failure(session_ptr self, const mcp::ToolCallParams& params, const ToolReply& reply) {
  if (as_task(self, params)) return [reply](const std::string& text, int code) { reply(RpcError{code, text}); };
  return [reply](const std::string& text, int) { reply(mcp::tool_error(text)); };
}

void tools_call_2025(session_ptr self, const mcp::ToolCallParams& params, const ToolReply& reply) {
  auto id = reply.id();
  auto progress = progress_token(params);
  bool task = as_task(self, params);
  auto ttl = params.task ? params.task->ttl : std::nullopt;
  auto fail = failure(self, params, reply);
  if (!task) self->state.tool_calls.starting(id);
  with_call_conversation(
      self, params, id, true,
      [=](const std::string& text, int code) {
        if (!task) self->state.tool_calls.abandon(id);
        fail(text, code);
      },
      [=](conversation_actor conv, const std::string& conv_id, const std::string& prompt) {
        if (task) return start_task(self, reply, conv_id, conv, prompt, progress, ttl);
        start_turn(self, reply, conv_id, conv, prompt, progress);
      });
}

void tools_call(session_ptr self, mcp::ToolCallParams p, ToolReply reply) {
  if (self->state.shutting_down) return reply(mcp::tool_error("The server is shutting down."));
  if (p.name != "llmx" && p.name != "llmx-reply")
    return reply(RpcError{rpc::kInvalidParams, fmt::format("Unknown tool: {}", p.name)});
  tools_call_2025(self, p, reply);
}

void initialize(session_ptr self, mcp::InitializeParams p, Reply<mcp::InitializeResult> reply) {
  if (self->state.initialized) return reply(RpcError{rpc::kInvalidRequest, "initialize called more than once"});
  auto h = rpc::mcp_handshake(p);
  reply(rpc::mcp_initialize_result(h, static_cast<bool>(self->state.options.tasks)));
  accept_handshake(self, std::move(h));
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
bool tasks_served(session_ptr self, const std::string& method, const rpc::Id& id) {
  const auto& st = self->state;
  if (st.options.tasks && mcp::has_tasks(st.protocol_version)) return true;
  write(self, st.rpc.error(id, rpc::kMethodNotFound, "Method not found: " + method));
  return false;
}

template <class Encode>
void watch_task(session_ptr self, TaskWatch w, const Reply<RawJson>& reply, Encode encode) {
  w.owner = self->state.options.principal;
  // A request the client cancels (notifications/cancelled) while it waits gets no reply.
  auto key = reply.id().json;
  self->state.task_waits.insert(key);
  self->request(self->state.options.tasks, caf::infinite, std::move(w), caf::actor_cast<session_actor>(self))
      .then([=](mcp::TaskView& task) { if (self->state.task_waits.erase(key)) reply(RawJson{encode(task)}); },
            [=](caf::error& err) { if (self->state.task_waits.erase(key)) reply(board_error(err)); });
}

void tasks_get(session_ptr self, mcp::TaskIdParams p, Reply<RawJson> reply) {
  if (tasks_served(self, "tasks/get", reply.id())) watch_task(self, TaskWatch{.owner = {}, .task_id = p.taskId}, reply, mcp::task_2025);
}
void tasks_result(session_ptr self, mcp::TaskIdParams p, Reply<RawJson> reply) {
  if (tasks_served(self, "tasks/result", reply.id()))
    watch_task(self, TaskWatch{.owner = {}, .task_id = p.taskId, .until = TaskWatch::Until::ended}, reply, mcp::task_result_2025);
}
void tasks_cancel(session_ptr self, mcp::TaskIdParams p, Reply<RawJson> reply) {
  if (tasks_served(self, "tasks/cancel", reply.id()))
    watch_task(self, TaskWatch{.owner = {}, .task_id = p.taskId, .cancel = true}, reply, mcp::task_2025);
}
void tasks_list(session_ptr self, mcp::TaskListParams p, Reply<RawJson> reply) {
  if (!tasks_served(self, "tasks/list", reply.id())) return;
  self->request(self->state.options.tasks, caf::infinite, TaskList{self->state.options.principal, p.cursor})
      .then([=](mcp::TaskPage& page) { reply(RawJson{mcp::task_list_2025(page)}); },
            [=](caf::error& err) { reply(board_error(err)); });
}

// notifications/cancelled: a call still starting is cancelled as soon as it starts; a running
// one is interrupted (its request then gets no reply, P6).
void cancelled(session_ptr self, mcp::CancelledParams p) {
  if (cancel_stateless_call(self, p.requestId.text)) return;
  if (self->state.task_waits.erase(p.requestId.text)) return;  // a tasks/* wait: only its reply is dropped
  if (auto call = self->state.tool_calls.cancel(p.requestId.text))
    caf::anon_send(call->conversation, submit_atom::value, Submission{call->sub_id, InterruptOp{}});
}

}  // namespace

void with_call_conversation(session_ptr self, const mcp::ToolCallParams& params, const rpc::Id& id, bool announce,
                            CallFail fail, CallRun run) {
  if (params.name == "llmx") {
    if (!params.arguments || params.arguments->is_null())
      return fail("Missing arguments for llmx tool-call; the `prompt` field is required.", rpc::kInvalidParams);
    mcp::LlmxToolArgs args;
    Config cfg;
    try {
      args = json::parse_as<mcp::LlmxToolArgs>(params.arguments->text);
      cfg = resolve_config(self, args.to_overrides());
    } catch (const json::DecodeError& err) {
      return fail(fmt::format("Failed to parse configuration for LLMX tool: {}", err.what()), rpc::kInvalidParams);
    } catch (const ConfigError& err) {
      return fail(fmt::format("Failed to load LLMX configuration from overrides: {}", err.what()), rpc::kInvalidParams);
    }
    cfg.session_source = "mcp";
    self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(cfg))
        .then(
            [=](conversation_actor conv, SessionConfiguredEvent sc) mutable {
              auto conv_id = sc.session_id;
              if (announce) notify(self, "llmx/event", mcp::event_params(id, Event{"", std::move(sc)}));
              run(conv, conv_id, args.prompt);
            },
            [=](caf::error& err) { fail("Failed to start LLMX session: " + error_text(err), rpc::kInternalError); });
    return;
  }
  if (!params.arguments || params.arguments->is_null())
    return fail("Missing arguments for llmx-reply tool-call; the `conversationId` and `prompt` fields are required.",
                rpc::kInvalidParams);
  mcp::ReplyToolArgs args;
  try {
    args = json::parse_as<mcp::ReplyToolArgs>(params.arguments->text);
  } catch (const json::DecodeError& err) {
    return fail(fmt::format("Failed to parse configuration for LLMX tool: {}", err.what()), rpc::kInvalidParams);
  }
  if (!is_uuid(args.conversationId))
    return fail("Failed to parse conversation_id: not a UUID: " + args.conversationId, rpc::kInvalidParams);
  if (auto* running = self->state.tool_calls.running(args.conversationId))
    return fail(fmt::format("Conversation {} is already running a turn (request {}); wait for it to finish or "
                            "cancel it first.", args.conversationId, running->request_id.json),
                rpc::kInvalidParams);
  Config cfg;
  try {
    cfg = resolve_config(self);
  } catch (const std::exception& err) {
    return fail(fmt::format("Failed to load LLMX configuration: {}", err.what()), rpc::kInternalError);
  }
  cfg.session_source = "mcp";
  auto conv_id = args.conversationId;
  auto prompt = args.prompt;
  // A live conversation, or a stored one resumed (after a restart of the server, say).
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, conv_id)
      .then([=](conversation_actor conv) { run(conv, conv_id, prompt); },
            [=](caf::error&) {
              ResumeThread req{cfg, ThreadRef{cfg.llmx_home, conv_id, {}}, {}};
              self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
                  .then([=](conversation_actor conv, SessionConfiguredEvent&) { run(conv, conv_id, prompt); },
                        [=](caf::error&) { fail("Session not found for conversation_id: " + conv_id, rpc::kInvalidParams); });
            });
}

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
