#include "actors/mcp_task_board.hpp"

#include <fmt/format.h>

#include <set>

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
  bool stateless = false;  // 2026-07-28: the client polls; only progress is pushed
  std::optional<std::pair<std::string, bool>> outcome;  // result text and is_error, once known
  // Sessions waiting for the task to end (or, `input_only`, to wait on the client).
  struct Waiter {
    caf::typed_response_promise<mcp::TaskView> promise;
    bool input_too = false;
  };
  std::vector<Waiter> waiters;
};

struct BoardState {
  mcp::TaskBook book;
  ToolCalls calls;                                 // the tasks' turns (sub id = task id)
  std::map<std::string, Running> running;          // by task id
  std::map<std::string, std::string> by_conversation;  // conversation id -> running task id
  rpc::Encoder rpc{true};
  std::set<caf::actor_addr> monitored;              // conversations watched for their end
  bool sweeping = false;
  static inline const char* name = "llmx.mcp_task_board";
};

using board_ptr = mcp_task_board_actor::stateful_pointer<BoardState>;

void add_line(std::string& lines, std::string_view line) {
  if (!lines.empty()) lines.push_back('\n');
  lines.append(line);
}

// The task as sessions see it: its outstanding questions while it waits on the client.
mcp::TaskView view(board_ptr self, const mcp::Task& t) {
  auto v = mcp::view_of(t, self->state.book.limits().poll_interval);
  if (auto it = self->state.running.find(t.id); it != self->state.running.end())
    for (const auto& [key, ask] : it->second.asks) v.questions.push_back({key, ask.message.params});
  return v;
}

std::string status_line(board_ptr self, const mcp::Task& t) {
  return self->state.rpc.notification("notifications/tasks/status", mcp::task_2025(view(self, t)));
}

// The turn's answer as the call's result: the text, the thread, whether it failed.
mcp::Task::Outcome outcome_of(const std::string& thread_id, const std::string& text, bool is_error) {
  return {json::to_json(mcp::CallToolResult{.text = text, .is_error = is_error, .thread_id = thread_id}), is_error};
}

// Answers the sessions waiting on a task that now has something to say: it ended, or (for the
// waiters that want that too) it waits on the client.
void wake(board_ptr self, Running& run, const mcp::Task& t) {
  bool ended = mcp::is_terminal(t.status), asking = t.status == mcp::TaskStatus::input_required;
  if (!ended && !asking) return;
  auto v = view(self, t);
  auto& ws = run.waiters;
  // A 2026 call answered with its questions is over: its progress token with it.
  if (asking && run.stateless) self->state.calls.set_progress_token(run.conversation_id, std::nullopt);
  for (auto it = ws.begin(); it != ws.end();)
    if (ended || it->input_too) {
      it->promise.deliver(v);
      it = ws.erase(it);
    } else {
      ++it;
    }
}

// A status change the client may hear of (2025-11-25 sessions only).
void tell_status(board_ptr self, const Running& run, const mcp::Task& t) {
  if (!run.stateless) self->send(run.session, task_atom::value, status_line(self, t));
}

void sweep_later(board_ptr self) {
  if (self->state.sweeping) return;
  self->state.sweeping = true;
  self->delayed_send(self, kSweepEvery, timeout_atom::value);
}

// The task is over: its outcome is kept for tasks/result, and whoever waits gets it.
void end_task(board_ptr self, std::string task_id) {  // by value: callers pass keys of `running`
  auto& st = self->state;
  auto it = st.running.find(task_id);
  if (it == st.running.end()) return;
  auto run = std::move(it->second);
  st.running.erase(it);
  st.by_conversation.erase(run.conversation_id);
  // Its call goes with it, even when the turn's last event is still to come (a cancelled task
  // ends at once): the next task in that conversation starts a call of its own.
  st.calls.drop(run.conversation_id);
  auto* t = st.book.get(task_id);
  if (!t) return;
  auto [text, is_error] = run.outcome.value_or(std::pair{std::string("The turn ended without an answer."), true});
  st.book.finish(*t, outcome_of(run.conversation_id, text, is_error), Clock::now(),
                 is_error ? std::optional(text) : std::nullopt);
  run.asks.clear();
  wake(self, run, *t);
  tell_status(self, run, *t);
  self->send(run.conversation, unsubscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
}

// The session that asked about a task gets its messages from now on, and the questions it was
// not asked yet.
void attach(board_ptr self, Running& run, const session_actor& session) {
  if (!session) return;
  run.session = session;
  if (run.stateless) return;  // its questions are polled, never sent
  for (auto& [_, ask] : run.asks)
    if (ask.sent_to != session.address()) {
      ask.sent_to = session.address();
      self->send(session, ask.message);
    }
}

// Events a turn only emits once nothing waits on the user any more (a tool runs).
bool moved_on(const EventMsg& msg) {
  return msg.is<ExecCommandBeginEvent>() || msg.is<PatchApplyBeginEvent>() || msg.is<McpToolCallBeginEvent>();
}

void on_event(board_ptr self, const std::string& conversation_id, const Event& ev) {
  auto& st = self->state;
  auto step = st.calls.on_event(conversation_id, ev);
  if (!step) return;
  const auto task_id = step->call->sub_id;
  auto rit = st.running.find(task_id);
  if (rit == st.running.end()) return;
  auto* t = st.book.get(task_id);
  if (!t) {  // expired (cancelled long ago) while its turn still ran: only the bookkeeping is left
    if (step->ended) end_task(self, task_id);
    return;
  }
  auto& run = rit->second;
  std::string lines;
  if (step->forward) {
    // 2025 notifications of a task carry its tag; 2026 polls have no task notifications.
    auto tag = run.stateless ? std::string() : task_id;
    if (!run.stateless)
      add_line(lines, st.rpc.notification("llmx/event", mcp::event_params(run.request_id, ev, tag)));
    if (step->progress)
      add_line(lines, st.rpc.notification("notifications/progress",
                                          mcp::progress_params(*step->call->progress_token,
                                                               step->call->progress.progress(), *step->progress, tag)));
  }
  if (step->ask_approval) {
    mcp::ElicitationTag tag{run.request_id, ev.id, run.stateless ? std::string() : task_id};
    if (auto ask = approval_ask(ev, conversation_id, &tag)) {
      PendingApproval route{run.conversation, ask->call_id, ask->kind, ask->server_name, task_id};
      if (!run.can_elicit) {  // nobody to ask: declined at once (P3)
        caf::anon_send(run.conversation, submit_atom::value, answer_submission(route, std::nullopt));
      } else {
        // Keys are unique per task: forwarded questions carry their server's own request ids.
        auto key = ask->kind == AskKind::elicitation ? ask->server_name + "/" + ask->call_id : ask->call_id;
        auto& pending = run.asks[key];
        pending = {route, TaskAsk{task_id, key, ask->method, ask->params}, {}};
        st.book.update(*t, mcp::TaskStatus::input_required, Clock::now(), "waiting for the user's answer");
        if (!run.stateless) {
          add_line(lines, status_line(self, *t));
          // What led to the question goes out before it.
          self->send(run.session, task_atom::value, std::exchange(lines, {}));
          if (run.can_elicit) {
            pending.sent_to = run.session.address();
            self->send(run.session, pending.message);
          }
        }
        wake(self, run, *t);
      }
    }
  }
  // The turn went on without an answer (the approval timed out): the task works again.
  if (!run.asks.empty() && moved_on(ev.msg)) {
    run.asks.clear();
    if (t->status == mcp::TaskStatus::input_required) {
      st.book.update(*t, mcp::TaskStatus::working, Clock::now());
      if (!run.stateless) add_line(lines, status_line(self, *t));
    }
  }
  if (step->result) run.outcome = std::pair{*step->result, step->result_is_error};
  if (!lines.empty()) self->send(run.session, task_atom::value, std::move(lines));
  if (step->ended) end_task(self, task_id);
}

caf::error not_found() { return refuse(Refusal::request, "Failed to retrieve task: Task not found"); }

void cancel(board_ptr self, mcp::Task& t) {
  auto& st = self->state;
  st.book.update(t, mcp::TaskStatus::cancelled, Clock::now(), "cancelled by the client");
  auto rit = st.running.find(t.id);
  if (rit == st.running.end()) return;
  auto& run = rit->second;
  t.outcome = outcome_of(run.conversation_id, "The task was cancelled before its turn completed.", true);
  run.asks.clear();
  wake(self, run, t);
  if (auto call = st.calls.cancel_conversation(run.conversation_id))
    caf::anon_send(run.conversation, submit_atom::value, Submission{call->sub_id, InterruptOp{}});
}

caf::result<mcp::TaskView> watch(board_ptr self, const TaskWatch& w, const session_actor& session) {
  auto& st = self->state;
  auto* t = st.book.find(w.task_id, w.owner);
  if (!t || t->stateless != w.stateless) return not_found();
  if (w.cancel) {  // (not attached: its questions are about to go)
    if (mcp::is_terminal(t->status))
      return refuse(Refusal::request, fmt::format("Cannot cancel task: already in terminal status '{}'",
                                                  mcp::task_status_name(t->status)));
    cancel(self, *t);
    return view(self, *t);
  }
  auto rit = st.running.find(t->id);
  if (rit != st.running.end()) {
    attach(self, rit->second, session);
    if (w.until == TaskWatch::Until::input)  // a 2026 round: its own progress token, or none
      st.calls.set_progress_token(rit->second.conversation_id, w.progress_token);
  }
  bool ready = w.until == TaskWatch::Until::now || mcp::is_terminal(t->status) ||
               (w.until == TaskWatch::Until::input && t->status == mcp::TaskStatus::input_required);
  if (ready || rit == st.running.end()) return view(self, *t);
  auto promise = self->make_response_promise<mcp::TaskView>();
  rit->second.waiters.push_back({promise, w.until == TaskWatch::Until::input});
  return promise;
}

mcp_task_board_actor::behavior_type board_impl(board_ptr self, mcp::TaskBook::Limits limits) {
  self->state.book = mcp::TaskBook(limits);
  // A conversation that ends under a running task fails that task.
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    st.monitored.erase(dm.source);
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
      [=](TaskStart& start, conversation_actor conv, session_actor session) -> caf::result<mcp::TaskView> {
        auto& st = self->state;
        if (st.by_conversation.count(start.conversation_id))
          return refuse(Refusal::request, fmt::format("Conversation {} is already running a task; wait for it or "
                                                      "cancel it first.", start.conversation_id));
        auto& t = st.book.create(start.owner, start.ttl_ms, Clock::now(), start.stateless);
        auto request_id = rpc::Id{start.request_id};
        st.calls.starting(request_id);
        if (!st.calls.start(request_id, start.conversation_id, conv, t.id, start.progress_token)) {
          st.book.erase(t.id);  // a call there still runs: this task would never hear its events
          return refuse(Refusal::request, mcp::busy_conversation(start.conversation_id));
        }
        auto& run = st.running[t.id];
        run.conversation = conv;
        run.conversation_id = start.conversation_id;
        run.request_id = request_id;
        run.session = session;
        run.can_elicit = start.can_elicit;
        run.stateless = start.stateless;
        st.by_conversation[start.conversation_id] = t.id;
        if (st.monitored.insert(conv.address()).second) self->monitor(conv);
        // Subscribed before the turn starts, so no event of it is missed.
        self->send(conv, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
        sweep_later(self);
        // The task exists once its turn does: another client's turn there refuses it.
        auto promise = self->make_response_promise<mcp::TaskView>();
        auto task_id = t.id, conv_id = start.conversation_id;
        start.input.exclusive = true;
        self->request(conv, caf::infinite, submit_atom::value, Submission{task_id, std::move(start.input)})
            .then(
                [=](const std::string& accepted) mutable {
                  auto& st = self->state;
                  auto* task = st.book.get(task_id);
                  if (!task) {
                    promise.deliver(not_found());
                    return;
                  }
                  if (!accepted.empty()) {
                    promise.deliver(view(self, *task));
                    return;
                  }
                  st.calls.drop(conv_id);
                  st.running.erase(task_id);
                  st.by_conversation.erase(conv_id);
                  st.book.erase(task_id);
                  promise.deliver(refuse(Refusal::request, mcp::busy_conversation(conv_id)));
                },
                [=](caf::error& err) mutable {
                  end_task(self, task_id);
                  promise.deliver(refuse(Refusal::internal, "the conversation did not take the turn: " +
                                                                error_text(err)));
                });
        return promise;
      },
      [=](TaskWatch& w, session_actor session) -> caf::result<mcp::TaskView> { return watch(self, w, session); },
      [=](TaskList& l) -> caf::result<mcp::TaskPage> {
        auto& st = self->state;
        auto page = st.book.list(l.owner, l.cursor);
        if (!page) return refuse(Refusal::request, "Invalid cursor");
        mcp::TaskPage out;
        for (const auto* t : page->tasks) out.tasks.push_back(view(self, *t));
        out.next_cursor = page->next_cursor;
        return out;
      },
      [=](TaskInput& in) {
        auto& st = self->state;
        if (!st.book.find(in.task_id, in.owner)) return;
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
          tell_status(self, run, *t);
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
