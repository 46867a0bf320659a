// MCP 2026-07-28 (issue 16 point 3), chosen per request by its `_meta`: server/discover,
// tools/list, tools/call and the tasks extension (tasks/get, tasks/update, tasks/cancel). Nothing
// is asked on stdout: a call that needs the user answers `input_required` with a sealed
// requestState and goes on when the client calls again with the answers. Every turn runs on the
// task board (a call without the tasks extension is a task the client never sees), so a call
// survives between its rounds whatever session carries them.
#include "actors/session_state.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_stateless.hpp"
#include "protocol/rpc/mcp_tasks.hpp"

namespace llmx::session_detail {

namespace {

using namespace std::chrono_literals;
using RawReply = Reply<RawJson>;

// tools/call params of 2026-07-28: a retry adds the answers and the state.
struct StatelessCallParams {
  std::string name;
  std::optional<RawJson> arguments;
  std::optional<mcp::CallMeta> _meta;
  std::optional<RawJson> inputResponses;
  std::optional<std::string> requestState;
  LLMX_FIELDS(v("name", s.name); v("arguments", s.arguments); v("_meta", s._meta);
              v("inputResponses", s.inputResponses); v("requestState", s.requestState))
};

struct TaskUpdateParams {
  std::string taskId;
  RawJson inputResponses;
  LLMX_FIELDS(v("taskId", s.taskId); v("inputResponses", s.inputResponses))
};

const mcp::RequestStateSeal& seal() {
  static const mcp::RequestStateSeal process_seal;  // one key per server process
  return process_seal;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const mcp::RequestMeta& meta(session_ptr self) { return *self->state.request_meta; }

// Cancels a task (its turn stops); nobody waits for the answer.
void cancel_task(session_ptr self, const std::string& task_id) {
  TaskWatch w{self->state.options.principal, task_id, TaskWatch::Until::now, true, true};
  self->request(self->state.options.tasks, caf::infinite, std::move(w), caf::actor_cast<session_actor>(self))
      .then([](mcp::TaskView&) {}, [](caf::error&) {});
}

// Each answer to a task's questions goes to the board: `{key: ElicitResult, ...}`; with `only`,
// just the answers to those questions (a retry answers the round its state was given for).
void give_answers(session_ptr self, const std::string& task_id, const RawJson& responses,
                  const std::vector<std::string>* only = nullptr) {
  json::Parser parser;
  auto root = parser.parse(responses.text);
  if (!root.is_object()) return;
  json::Object answers = root.get_object().value_unsafe();  // named: the loop must not hold a temporary's reference
  for (auto [key, value] : answers) {
    if (only && std::find(only->begin(), only->end(), std::string_view(key)) == only->end()) continue;
    caf::anon_send(self->state.options.tasks, TaskInput{self->state.options.principal, task_id, std::string(key),
                                                        json::to_text(value)});
  }
}

// Answers a call once its turn has ended (the result) or waits on the user (its questions and a
// sealed state to continue with, valid as long as the turn waits for the answer).
void answer_when_ready(session_ptr self, const RawReply& reply, const std::string& task_id, const std::string& digest,
                       std::optional<RawJson> progress, std::chrono::milliseconds lifetime) {
  auto& st = self->state;
  st.stateless_calls[reply.id().json] = task_id;
  TaskWatch w{st.options.principal, task_id, TaskWatch::Until::input, false, true, std::move(progress)};
  self->request(st.options.tasks, caf::infinite, std::move(w), caf::actor_cast<session_actor>(self))
      .then(
          [=](mcp::TaskView& task) {
            auto& st = self->state;
            if (!st.stateless_calls.erase(reply.id().json)) return;  // cancelled meanwhile: no reply
            if (task.terminal()) return reply(RawJson{mcp::stateless_result(task.result.value_or("{}"))});
            std::vector<std::pair<std::string, std::string>> questions;
            for (auto& q : task.questions) questions.emplace_back(q.key, q.params);
            std::vector<std::string> keys;
            for (auto& q : task.questions) keys.push_back(q.key);
            auto state = seal().seal({task_id, st.options.principal, digest, now_ms() + lifetime.count(), keys});
            reply(RawJson{mcp::input_required_result(questions, state)});
          },
          [=](caf::error& err) {
            if (self->state.stateless_calls.erase(reply.id().json)) reply(board_error(err));
          });
}

void discover(session_ptr, RawJson, RawReply reply) { reply(RawJson{mcp::discover_result()}); }

void tools_list(session_ptr, RawJson, RawReply reply) { reply(RawJson{mcp::stateless_tools_list()}); }

// The approval policy a call of `llmx` would run under (its argument, else the configuration).
std::optional<AskForApproval> call_policy(session_ptr self, const StatelessCallParams& p) {
  if (p.name != "llmx" || !p.arguments) return std::nullopt;
  try {
    auto args = json::parse_as<mcp::LlmxToolArgs>(p.arguments->text);
    return resolve_config(self, args.to_overrides()).approval_policy;
  } catch (const std::exception&) {
    return std::nullopt;  // with_call_conversation says what is wrong
  }
}

void tools_call(session_ptr self, StatelessCallParams p, RawReply reply) {
  auto& st = self->state;
  if (p.name != "llmx" && p.name != "llmx-reply")
    return reply(RpcError{rpc::kInvalidParams, fmt::format("Unknown tool: {}", p.name)});
  if (st.shutting_down) return reply(RpcError{rpc::kInternalError, "The server is shutting down."});
  const auto m = meta(self);
  bool can_elicit = m.capabilities.elicitation_form;
  auto digest = mcp::call_digest(p.name, p.arguments ? p.arguments->text : "null");
  // The state lives as long as a question waits for its answer (approval_timeout).
  std::chrono::milliseconds lifetime{600000};
  try {
    lifetime = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(resolve_config(self).approval_timeout_ms),
                                                   std::chrono::hours(1));
  } catch (const std::exception&) {
  }
  // This round's progress token (a task's progress is not the extension's).
  std::optional<RawJson> progress;
  if (p._meta && !p._meta->progressToken.is_null() && !m.tasks_extension) progress = p._meta->progressToken;
  if (p.inputResponses && (!p.requestState || !p.inputResponses->text.starts_with("{")))
    return reply(RpcError{rpc::kInvalidParams, "Invalid params: inputResponses must be an object and come with the "
                                               "requestState of the answer that asked for them"});
  if (p.requestState) {  // a retry: the answers go to the waiting turn, then the call goes on
    auto state = seal().open(*p.requestState);
    if (!state || state->owner != st.options.principal || state->call_digest != digest)
      return reply(RpcError{rpc::kInvalidParams, "Invalid params: requestState is not one this server gave for this "
                                                 "call (or the server restarted since); call again without it"});
    if (state->expires_ms < now_ms()) {
      cancel_task(self, state->task_id);  // nobody will answer its questions any more
      return reply(RpcError{rpc::kInvalidParams, "Invalid params: requestState has expired; call again without it"});
    }
    if (p.inputResponses) give_answers(self, state->task_id, *p.inputResponses, &state->keys);
    return answer_when_ready(self, reply, state->task_id, digest, progress, lifetime);
  }
  // A call that asks before every command the client cannot answer cannot run at all; under the
  // other policies, approvals are exceptions and the policy decides them (as in 2025).
  if (!can_elicit && call_policy(self, p) == AskForApproval::untrusted)
    return reply(mcp::missing_capability("approval-policy untrusted asks before commands: declare the elicitation "
                                         "capability (form mode) to answer, or choose another policy",
                                         R"({"elicitation":{"form":{}}})"));
  auto id = reply.id();
  st.stateless_calls[id.json] = "";  // starting: a cancel now stops it as soon as it runs
  mcp::ToolCallParams call{p.name, p.arguments, p._meta, std::nullopt};
  with_call_conversation(
      self, call, id, false,
      [=](const std::string& text, int code) {
        if (!self->state.stateless_calls.erase(id.json)) return;
        // A task must be answered with a task, so it fails as a request; a plain call's bad
        // arguments are the tool's error, for the model to read and correct (as in 2025).
        if (m.tasks_extension) return reply(RpcError{code, text});
        reply(RawJson{mcp::stateless_result(json::to_json(mcp::tool_error(text)))});
      },
      [=](conversation_actor conv, const std::string& conv_id, const std::string& prompt) {
        auto& st = self->state;
        remember(self, conv_id, conv);
        TaskStart start{.owner = st.options.principal, .ttl_ms = std::nullopt, .conversation_id = conv_id,
                        .request_id = id.json, .progress_token = progress, .can_elicit = can_elicit,
                        .stateless = true, .input = UserInputOp{{TextInput{prompt}}, can_elicit}};
        self->request(st.options.tasks, caf::infinite, std::move(start), conv, caf::actor_cast<session_actor>(self))
            .then(
                [=](mcp::TaskView& task) {
                  if (!self->state.stateless_calls.erase(id.json)) return cancel_task(self, task.id);
                  // A client with the tasks extension polls the task; any other waits for the turn.
                  if (m.tasks_extension) return reply(RawJson{mcp::create_task_2026(task)});
                  answer_when_ready(self, reply, task.id, digest, progress, lifetime);
                },
                [=](caf::error& err) {
                  if (self->state.stateless_calls.erase(id.json)) reply(board_error(err));
                });
      });
}

// The tasks extension's methods need the client to have declared it.
bool tasks_declared(session_ptr self, const RawReply& reply) {
  if (meta(self).tasks_extension) return true;
  reply(mcp::missing_capability("tasks/* need the io.modelcontextprotocol/tasks extension in clientCapabilities",
                                std::string(R"({"extensions":{")") + std::string(mcp::kTasksExtension) + R"(":{}}})"));
  return false;
}

void watch(session_ptr self, TaskWatch w, const RawReply& reply, std::function<std::string(const mcp::TaskView&)> encode) {
  w.owner = self->state.options.principal;
  w.stateless = true;
  self->request(self->state.options.tasks, caf::infinite, std::move(w), caf::actor_cast<session_actor>(self))
      .then([=](mcp::TaskView& task) { reply(RawJson{encode(task)}); },
            [=](caf::error& err) { reply(board_error(err)); });
}

std::string ack(const mcp::TaskView&) { return mcp::stateless_result("{}"); }

void tasks_get_2026(session_ptr self, mcp::TaskIdParams p, RawReply reply) {
  if (tasks_declared(self, reply)) watch(self, TaskWatch{.owner = {}, .task_id = p.taskId}, reply, mcp::task_get_2026);
}

void tasks_update(session_ptr self, TaskUpdateParams p, RawReply reply) {
  if (!tasks_declared(self, reply)) return;
  // The task must exist (-32602 otherwise); its answers then go to the board, in order.
  watch(self, TaskWatch{.owner = {}, .task_id = p.taskId}, reply, [=](const mcp::TaskView& task) {
    give_answers(self, task.id, p.inputResponses);
    return ack(task);
  });
}

void tasks_cancel_2026(session_ptr self, mcp::TaskIdParams p, RawReply reply) {
  if (!tasks_declared(self, reply)) return;
  // Cooperative: a task that has ended already is acknowledged all the same.
  watch(self, TaskWatch{.owner = {}, .task_id = p.taskId}, reply, [=](const mcp::TaskView& task) {
    if (!task.terminal())
      cancel_task(self, task.id);
    return ack(task);
  });
}

}  // namespace

bool cancel_stateless_call(session_ptr self, const std::string& request_id_json) {
  auto& st = self->state;
  auto it = st.stateless_calls.find(request_id_json);
  if (it == st.stateless_calls.end()) return false;
  if (!it->second.empty()) cancel_task(self, it->second);  // still starting: stopped once it has a task
  st.stateless_calls.erase(it);
  return true;
}

const Methods& mcp_stateless_methods() {
  static const Methods table = [] {
    constexpr auto mcp = rpc::Export::no;
    Methods t;
    t.bind<RawJson, RawJson>("server/discover", discover, mcp);
    t.bind<RawJson, RawJson>("tools/list", tools_list, mcp);
    t.bind<StatelessCallParams, RawJson>("tools/call", tools_call, mcp);
    t.bind<mcp::TaskIdParams, RawJson>("tasks/get", tasks_get_2026, mcp);
    t.bind<TaskUpdateParams, RawJson>("tasks/update", tasks_update, mcp);
    t.bind<mcp::TaskIdParams, RawJson>("tasks/cancel", tasks_cancel_2026, mcp);
    t.ahead("server/discover").ahead("tools/list");  // no notification explains them (session.cpp)
    return t;
  }();
  return table;
}

void serve_stateless(session_ptr self, const rpc::Incoming& in) {
  auto& st = self->state;
  auto parsed = mcp::read_request_meta(in.params);
  if (auto* err = std::get_if<RpcError>(&parsed))
    return write(self, st.rpc.error(in.id, err->code, err->message, err->data), rpc::Lane::ahead);
  if (!st.options.tasks)
    return write(self, st.rpc.error(in.id, rpc::kInternalError, "this server cannot serve 2026-07-28 requests"),
                 rpc::Lane::ahead);
  st.request_meta = std::get<mcp::RequestMeta>(parsed);
  if (!mcp_stateless_methods().call(self, in, st.responder))
    write(self, st.rpc.error(in.id, rpc::kMethodNotFound,
                             fmt::format("Method not found: {} (not a method of MCP {})", in.method,
                                         mcp::kStatelessVersion)));
  st.request_meta.reset();
}

}  // namespace llmx::session_detail
