#include "actors/conversation.hpp"

#include <deque>

#include "actors/approval_broker.hpp"
#include "actors/turn_executor.hpp"
#include "protocol/ids.hpp"
#include "sandbox/sandbox_policy.hpp"

#include <fmt/format.h>
#include "protocol/environment_context.hpp"

namespace llmx {

namespace {

struct ConversationState {
  ConversationState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  std::string id;
  Config config;
  std::vector<ResponseItem> history;
  std::vector<event_sink_actor> subscribers;
  uint64_t next_sub = 0;
  std::optional<turn_executor_actor> task;
  approval_broker_actor broker;
  std::string task_sub_id;
  bool shutting_down = false;
  static inline const char* name = "llmx.conversation";
};

using conversation_ptr = conversation_actor::stateful_pointer<ConversationState>;

void emit(conversation_ptr self, std::vector<Event> events) {
  if (events.empty()) return;
  ConversationEvents batch{self->state.id, std::move(events)};
  auto& subs = self->state.subscribers;
  for (size_t i = 0; i + 1 < subs.size(); ++i) self->send(subs[i], batch);
  if (!subs.empty()) self->send(subs.back(), std::move(batch));
}

void emit(conversation_ptr self, Event ev) {
  std::vector<Event> one;
  one.push_back(std::move(ev));
  emit(self, std::move(one));
}

void start_task(conversation_ptr self, const std::string& sub_id, std::vector<UserInput> input) {
  auto exec = spawn_turn_executor(self, caf::actor_cast<conversation_actor>(self), self->state.broker);
  self->state.task = exec;
  self->state.task_sub_id = sub_id;
  self->send(exec, start_atom::value,
             TaskSpec{self->state.id, sub_id, self->state.config, self->state.history, std::move(input)});
}

void apply_override(Config& cfg, const OverrideTurnContextOp& o) {
  if (o.cwd) cfg.cwd = *o.cwd;
  if (o.approval_policy) cfg.approval_policy = *o.approval_policy;
  if (o.sandbox_policy) cfg.sandbox_policy = *o.sandbox_policy;
  if (o.model) cfg.model = *o.model;
  if (o.effort) cfg.reasoning_effort = *o.effort;
  if (o.summary) cfg.reasoning_summary = *o.summary;
}

void finish_shutdown(conversation_ptr self) {
  emit(self, Event{self->state.task_sub_id, ShutdownCompleteEvent{}});
  // Linked helpers ignore a normal exit; tell the broker explicitly so it does not outlive us.
  self->send_exit(self->state.broker, caf::exit_reason::user_shutdown);
  self->quit();
}

conversation_actor::behavior_type conversation_impl(conversation_ptr self, std::string id, Config cfg) {
  self->state.id = std::move(id);
  self->state.config = std::move(cfg);
  self->state.history = initial_context(self->state.config);
  self->state.broker = spawn_approval_broker(self, caf::actor_cast<conversation_actor>(self),
                                             self->state.config.approval_timeout_ms);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& subs = self->state.subscribers;
    subs.erase(std::remove_if(subs.begin(), subs.end(),
                              [&](const event_sink_actor& s) { return s.address() == dm.source; }),
               subs.end());
  });
  // A crashed turn executor (linked) must not take the conversation down: report and go on.
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (self->state.task && em.source == self->state.task->address()) {
      auto sub = self->state.task_sub_id;
      self->state.task.reset();
      self->send(self->state.broker, cancel_atom::value);  // nothing may wait for a finished turn
      if (em.reason && em.reason != caf::exit_reason::normal) {
        emit(self, Event{sub, ErrorEvent{"internal error: the turn ended unexpectedly: " +
                                          self->system().render(em.reason)}});
        emit(self, Event{sub, TaskCompleteEvent{}});
      }
      if (self->state.shutting_down) finish_shutdown(self);
      return;
    }
    if (em.reason) self->quit(em.reason);
  });
  return {
      [=](submit_atom, Submission& sub) -> std::string {
        auto& st = self->state;
        if (sub.id.empty()) sub.id = std::to_string(st.next_sub++);
        if (st.shutting_down) return sub.id;
        if (auto* in = sub.op.get_if<UserInputOp>()) {
          if (in->items.empty()) return sub.id;
          if (st.task)
            self->send(*st.task, InjectInput{std::move(in->items)});
          else
            start_task(self, sub.id, std::move(in->items));
        } else if (auto* turn = sub.op.get_if<UserTurnOp>()) {
          OverrideTurnContextOp o;
          o.cwd = turn->cwd;
          o.approval_policy = turn->approval_policy;
          o.sandbox_policy = turn->sandbox_policy;
          o.model = turn->model;
          o.effort = turn->effort;
          o.summary = turn->summary;
          apply_override(st.config, o);
          if (turn->items.empty()) return sub.id;
          if (st.task)
            self->send(*st.task, InjectInput{std::move(turn->items)});
          else
            start_task(self, sub.id, std::move(turn->items));
        } else if (auto* o = sub.op.get_if<OverrideTurnContextOp>()) {
          apply_override(st.config, *o);
        } else if (auto* ea = sub.op.get_if<ExecApprovalOp>()) {
          self->send(st.broker, ApprovalAnswer{ea->id, ea->decision});
        } else if (auto* pa = sub.op.get_if<PatchApprovalOp>()) {
          self->send(st.broker, ApprovalAnswer{pa->id, pa->decision});
        } else if (sub.op.is<InterruptOp>()) {
          if (st.task) self->send(*st.task, interrupt_atom::value);
        } else if (sub.op.is<ShutdownOp>()) {
          st.shutting_down = true;
          if (st.task)
            self->send(*st.task, interrupt_atom::value);
          else
            finish_shutdown(self);
        }
        return sub.id;
      },
      [=](subscribe_atom, event_sink_actor& sink) {
        auto& subs = self->state.subscribers;
        for (auto& s : subs)
          if (s == sink) return;  // subscribing twice must not duplicate or split (P7)
        self->monitor(sink);
        subs.push_back(std::move(sink));
      },
      [=](unsubscribe_atom, event_sink_actor& sink) {
        auto& subs = self->state.subscribers;
        subs.erase(std::remove(subs.begin(), subs.end(), sink), subs.end());
      },
      [=](std::vector<Event>& events) { emit(self, std::move(events)); },
      [=](RecordItems& rec) {
        auto& h = self->state.history;
        h.insert(h.end(), std::make_move_iterator(rec.items.begin()), std::make_move_iterator(rec.items.end()));
      },
      [=](TaskDone&) {
        // The executor quits right after this; the exit handler clears the task.
      },
  };
}

// --- manager ------------------------------------------------------------------------------------

struct ManagerState {
  ManagerState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  std::map<std::string, conversation_actor> conversations;
  size_t pending_shutdowns = 0;
  std::optional<caf::typed_response_promise<bool>> shutdown_promise;
  static inline const char* name = "llmx.conversation_manager";
};

using manager_ptr = conversation_manager_actor::stateful_pointer<ManagerState>;

conversation_manager_actor::behavior_type manager_impl(manager_ptr self) {
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& m = self->state.conversations;
    for (auto it = m.begin(); it != m.end(); ++it)
      if (it->second.address() == dm.source) {
        m.erase(it);
        break;
      }
    if (self->state.shutdown_promise && m.empty()) {
      self->state.shutdown_promise->deliver(true);
      self->quit();
    }
  });
  return {
      [=](new_conv_atom, Config& cfg) -> caf::result<conversation_actor, SessionConfiguredEvent> {
        auto id = new_uuid_v7();
        SessionConfiguredEvent sc;
        sc.session_id = id;
        sc.model = cfg.model;
        sc.reasoning_effort = cfg.reasoning_effort;
        if (cfg.sandbox_policy.mode != SandboxMode::danger_full_access) {
          auto support = sandbox::probe();  // cached after the first conversation
          if (!support.complete())
            sc.sandbox_warning = fmt::format("the {} sandbox cannot be fully enforced here ({}); sandbox_fallback = {}",
                                             enum_name(cfg.sandbox_policy.mode), support.summary, cfg.sandbox_fallback);
        }
        auto conv = self->spawn(conversation_impl, id, std::move(cfg));
        self->monitor(conv);
        self->state.conversations.emplace(id, conv);
        return {conv, std::move(sc)};
      },
      [=](find_conv_atom, const std::string& id) -> caf::result<conversation_actor> {
        auto it = self->state.conversations.find(id);
        if (it == self->state.conversations.end())
          return caf::make_error(caf::sec::runtime_error, "no such conversation: " + id);
        return it->second;
      },
      [=](shutdown_atom) -> caf::result<bool> {
        auto& m = self->state.conversations;
        if (m.empty()) {
          self->quit();
          return true;
        }
        self->state.shutdown_promise = self->make_response_promise<bool>();
        for (auto& [_, conv] : m) caf::anon_send(conv, submit_atom::value, Submission{"", ShutdownOp{}});
        return *self->state.shutdown_promise;
      },
  };
}

}  // namespace

conversation_manager_actor spawn_conversation_manager(caf::actor_system& sys) {
  return sys.spawn(manager_impl);
}

}  // namespace llmx
