#include "actors/mcp_task_board.hpp"

#include <fmt/format.h>

#include "actors/outgoing_requests.hpp"
#include "actors/refusal.hpp"
#include "actors/tool_calls.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp.hpp"

namespace llmx {

namespace {

using Clock = mcp::TaskBook::Clock;
constexpr auto kSweepEvery = std::chrono::seconds(30);

// What the board holds for a task whose turn still runs.
struct Running {
  conversation_actor conversation;
  std::string conversation_id;
  rpc::Id request_id;
  session_actor session;  // where its messages go: the last session that asked about it
  bool can_elicit = false;
  struct Ask {
    PendingApproval route;
    TaskAsk message;
    caf::actor_addr sent_to;  // the session that was asked (asked again when another one polls)
  };
  std::map<std::string, Ask> asks;  // questions the client has not answered, by key
  std::optional<std::pair<std::string, bool>> outcome;  // result text and is_error, once known
  std::vector<caf::typed_response_promise<std::string>> waiters;  // tasks/result
};

struct BoardState {
  mcp::TaskBook book;
  ToolCalls calls;                                 // the tasks' turns (sub id = task id)
  std::map<std::string, Running> running;          // by task id
  std::map<std::string, std::string> by_conversation;  // conversation id -> running task id
  rpc::Encoder rpc{true};
  bool sweeping = false;
  static inline const char* name = "llmx.mcp_task_board";
};

using board_ptr = mcp_task_board_actor::stateful_pointer<BoardState>;

void add_line(std::string& lines, std::string_view line) {
  if (!lines.empty()) lines.push_back('\n');
  lines.append(line);
}

std::string task_json(board_ptr self, const mcp::Task& t) {
  json::Writer w;
  w.begin_object();
  mcp::write_task_fields(w, t, self->state.book.limits().poll_interval);
  w.end_object();
  return w.take();
}

std::string status_line(board_ptr self, const mcp::Task& t) {
  return self->state.rpc.notification("notifications/tasks/status", task_json(self, t));
}

std::string result_json(const std::string& task_id, const std::string& thread_id, const std::string& text,
                        bool is_error) {
  return json::to_json(
      mcp::CallToolResult{.text = text, .is_error = is_error, .thread_id = thread_id, .related_task = task_id});
}

void sweep_later(board_ptr self) {
  if (self->state.sweeping) return;
  self->state.sweeping = true;
  self->delayed_send(self, kSweepEvery, timeout_atom::value);
}

// The task is over: its outcome is kept for tasks/result, and whoever waits gets it.
void end_task(board_ptr self, const std::string& task_id) {
  auto& st = self->state;
  auto it = st.running.find(task_id);
  if (it == st.running.end()) return;
  auto run = std::move(it->second);
  st.running.erase(it);
  st.by_conversation.erase(run.conversation_id);
  auto* t = st.book.get(task_id);
  if (!t) return;
  auto [text, is_error] = run.outcome.value_or(std::pair{std::string("The turn ended without an answer."), true});
  st.book.finish(*t, result_json(task_id, run.conversation_id, text, is_error), is_error, Clock::now());
  for (auto& waiter : run.waiters) waiter.deliver(*t->result);
  self->send(run.session, task_atom::value, status_line(self, *t));
}

// The session that asked about a task gets its messages from now on, and the questions it was
// not asked yet.
void attach(board_ptr self, Running& run, const session_actor& session) {
  if (!session) return;
  run.session = session;
  for (auto& [_, ask] : run.asks)
    if (ask.sent_to != session.address()) {
      ask.sent_to = session.address();
      self->send(session, ask.message);
    }
}

void on_event(board_ptr self, const std::string& conversation_id, const Event& ev) {
  auto& st = self->state;
  auto step = st.calls.on_event(conversation_id, ev);
  if (!step) return;
  const auto task_id = step->call->sub_id;
  auto rit = st.running.find(task_id);
  auto* t = st.book.get(task_id);
  if (rit == st.running.end() || !t) return;
  auto& run = rit->second;
  std::string lines;
  if (step->forward) {
    add_line(lines, st.rpc.notification("llmx/event", mcp::event_params(run.request_id, ev)));
    if (step->progress)
      add_line(lines, st.rpc.notification("notifications/progress",
                                          mcp::progress_params(*step->call->progress_token,
                                                               step->call->progress.progress(), *step->progress)));
  }
  if (step->ask_approval)
    if (auto ask = approval_ask(ev, conversation_id, &run.request_id, task_id)) {
      PendingApproval route{run.conversation, ask->call_id, ask->kind, ask->server_name, task_id};
      if (!run.can_elicit) {
        caf::anon_send(run.conversation, submit_atom::value, answer_submission(route, std::nullopt));
      } else {
        auto& pending = run.asks[ask->call_id];
        pending = {route, TaskAsk{task_id, ask->call_id, ask->method, ask->params}, run.session.address()};
        st.book.update(*t, mcp::TaskStatus::input_required, Clock::now(), "waiting for the user's answer");
        add_line(lines, status_line(self, *t));
        self->send(run.session, pending.message);
      }
    }
  if (step->result) run.outcome = std::pair{*step->result, step->result_is_error};
  if (!lines.empty()) self->send(run.session, task_atom::value, std::move(lines));
  if (step->ended) end_task(self, task_id);
}

caf::error not_found() { return refuse(Refusal::request, "Failed to retrieve task: Task not found"); }

caf::result<std::string> query(board_ptr self, const TaskQuery& q, const session_actor& session) {
  auto& st = self->state;
  if (q.method == "tasks/list") {
    auto page = st.book.list(q.owner, q.cursor);
    if (!page) return refuse(Refusal::request, "Invalid cursor");
    json::Writer w;
    w.begin_object().key("tasks").begin_array();
    for (const auto* t : page->tasks) {
      w.begin_object();
      mcp::write_task_fields(w, *t, st.book.limits().poll_interval);
      w.end_object();
    }
    w.end_array();
    if (page->next_cursor) w.field("nextCursor", *page->next_cursor);
    w.end_object();
    return w.take();
  }
  auto* t = st.book.find(q.task_id, q.owner);
  if (!t) return not_found();
  auto rit = st.running.find(t->id);
  if (rit != st.running.end()) attach(self, rit->second, session);
  if (q.method == "tasks/get") return task_json(self, *t);
  if (q.method == "tasks/result") {
    if (t->result) return *t->result;
    if (rit == st.running.end()) return refuse(Refusal::internal, "the task has no outcome");
    auto promise = self->make_response_promise<std::string>();
    rit->second.waiters.push_back(promise);
    return promise;
  }
  if (q.method == "tasks/cancel") {
    if (mcp::is_terminal(t->status))
      return refuse(Refusal::request, fmt::format("Cannot cancel task: already in terminal status '{}'",
                                                  mcp::task_status_name(t->status)));
    st.book.update(*t, mcp::TaskStatus::cancelled, Clock::now(), "cancelled by the client");
    if (rit != st.running.end()) {
      auto& run = rit->second;
      t->result = result_json(t->id, run.conversation_id, "The task was cancelled before its turn completed.", true);
      for (auto& waiter : run.waiters) waiter.deliver(*t->result);
      run.waiters.clear();
      run.asks.clear();
      if (auto call = st.calls.cancel_conversation(run.conversation_id))
        caf::anon_send(run.conversation, submit_atom::value, Submission{call->sub_id, InterruptOp{}});
    }
    return task_json(self, *t);
  }
  return refuse(Refusal::request, "unknown tasks method " + q.method);
}

mcp_task_board_actor::behavior_type board_impl(board_ptr self, mcp::TaskBook::Limits limits) {
  self->state.book = mcp::TaskBook(limits);
  // A conversation that ends under a running task fails that task.
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    for (auto& [task_id, run] : st.running)
      if (run.conversation.address() == dm.source) {
        auto conversation_id = run.conversation_id;
        if (auto step = st.calls.drop(conversation_id); step && step->result)
          run.outcome = std::pair{*step->result, step->result_is_error};
        end_task(self, task_id);
        return;
      }
  });
  return {
      [=](TaskStart& start, conversation_actor conv, session_actor session) -> caf::result<std::string> {
        auto& st = self->state;
        if (st.by_conversation.count(start.conversation_id))
          return refuse(Refusal::request, fmt::format("Conversation {} is already running a task; wait for it or "
                                                      "cancel it first.", start.conversation_id));
        auto& t = st.book.create(start.owner, start.ttl_ms, Clock::now());
        auto request_id = rpc::Id{start.request_id};
        st.calls.starting(request_id);
        st.calls.start(request_id, start.conversation_id, conv, t.id, start.progress_token);
        st.running[t.id] = Running{conv, start.conversation_id, request_id, session, start.can_elicit, {}, {}, {}};
        st.by_conversation[start.conversation_id] = t.id;
        self->monitor(conv);
        // Subscribed before the turn starts, so no event of it is missed.
        self->send(conv, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
        caf::anon_send(conv, submit_atom::value, Submission{t.id, std::move(start.input)});
        sweep_later(self);
        return task_json(self, t);
      },
      [=](TaskQuery& q, session_actor session) -> caf::result<std::string> { return query(self, q, session); },
      [=](TaskInput& in) {
        auto& st = self->state;
        auto rit = st.running.find(in.task_id);
        if (rit == st.running.end()) return;
        auto& run = rit->second;
        auto ask = run.asks.find(in.key);
        if (ask == run.asks.end()) return;
        std::optional<json::Element> result;
        json::Parser parser;
        if (in.result) try {
            result = parser.parse(*in.result);
          } catch (const json::DecodeError&) {
          }
        caf::anon_send(run.conversation, submit_atom::value, answer_submission(ask->second.route, result));
        run.asks.erase(ask);
        auto* t = st.book.get(in.task_id);
        if (t && run.asks.empty() && t->status == mcp::TaskStatus::input_required) {
          st.book.update(*t, mcp::TaskStatus::working, Clock::now());
          self->send(run.session, task_atom::value, status_line(self, *t));
        }
      },
      [=](timeout_atom) {
        auto& st = self->state;
        st.sweeping = false;
        st.book.expire(Clock::now());
        if (st.book.size() > 0) sweep_later(self);
      },
      [=](ConversationEvents& batch) {
        for (const auto& ev : batch.events) on_event(self, batch.conversation_id, ev);
      },
  };
}

}  // namespace

mcp_task_board_actor spawn_mcp_task_board(caf::actor_system& sys, mcp::TaskBook::Limits limits) {
  return sys.spawn(board_impl, limits);
}

}  // namespace llmx
