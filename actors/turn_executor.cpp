#include "actors/turn_executor.hpp"

#include <fmt/format.h>

#include "actors/model_streamer.hpp"
#include "actors/turn_logic.hpp"
#include "protocol/environment_context.hpp"
#include "protocol/ids.hpp"

namespace llmx {

struct TurnExecutorState {
  TurnExecutorState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  conversation_actor conversation;
  TaskSpec spec;
  std::vector<ResponseItem> history;  // what the next request sends
  std::vector<std::vector<UserInput>> pending_input;
  std::unique_ptr<TurnLogic> logic;
  std::optional<model_streamer_actor> streamer;
  uint64_t seq = 0;
  bool done = false;
  std::vector<Event> outbox;  // events of the current message, sent as one batch
  static inline const char* name = "llmx.turn_executor";
};

namespace {

using executor_ptr = turn_executor_actor::stateful_pointer<TurnExecutorState>;

void emit(executor_ptr self, EventMsg msg) {
  self->state.outbox.push_back(Event{self->state.spec.sub_id, std::move(msg)});
}

// Sends what this message produced; called before anything else goes to the conversation so
// the conversation sees events and records in the order they happened.
void flush(executor_ptr self) {
  auto& st = self->state;
  if (st.outbox.empty()) return;
  self->send(st.conversation, std::move(st.outbox));
  st.outbox = {};
}

void emit_all(executor_ptr self, std::vector<EventMsg>& msgs) {
  for (auto& m : msgs) emit(self, std::move(m));
  msgs.clear();
}

// Appends items to the task's history and the conversation's, announcing each.
void record(executor_ptr self, std::vector<ResponseItem> items) {
  if (items.empty()) return;
  for (const auto& it : items) {
    self->state.history.push_back(it);
    emit(self, RawResponseItemEvent{it});
  }
  flush(self);
  self->send(self->state.conversation, RecordItems{std::move(items)});
}

void end_task(executor_ptr self, bool aborted) {
  auto& st = self->state;
  if (st.done) return;
  st.done = true;
  if (st.streamer) self->send(*st.streamer, cancel_atom::value);
  if (aborted)
    emit(self, TurnAbortedEvent{"interrupted"});
  else
    emit(self, TaskCompleteEvent{st.logic->last_agent_message()});
  flush(self);
  self->send(st.conversation, TaskDone{st.spec.sub_id, aborted});
  self->quit();
}

void send_request(executor_ptr self) {
  auto& st = self->state;
  ModelRequest req;
  req.seq = ++st.seq;
  req.prompt.model = st.spec.config.model;
  req.prompt.instructions = system_instructions(st.spec.config);
  req.prompt.input = st.history;
  req.provider = st.spec.config.provider;
  req.call_id_prefix = fmt::format("call_{}_{}", st.spec.sub_id, st.seq);
  req.user_agent = user_agent();
  st.streamer = spawn_model_streamer(self, caf::actor_cast<turn_executor_actor>(self), std::move(req));
}

// Runs the tool calls of a response. Tools arrive with the tool router; until one is offered,
// every call is answered with the reason it cannot run.
std::vector<ResponseItem> run_tools(const std::vector<FunctionCallItem>& calls) {
  std::vector<ResponseItem> outputs;
  for (const auto& c : calls) outputs.push_back(FunctionCallOutputItem{c.call_id, "unsupported call: " + c.name});
  return outputs;
}

void on_response_complete(executor_ptr self) {
  auto& st = self->state;
  auto& logic = *st.logic;
  auto finish_reason = logic.completion().finish_reason;
  emit(self, logic.token_count(st.spec.config.model_context_window));
  record(self, logic.take_items());
  auto calls = logic.take_calls();
  st.streamer.reset();
  if (!calls.empty()) {
    record(self, run_tools(calls));
  } else if (finish_reason == "length") {
    emit(self, WarningEvent{"The model stopped because it reached its output token limit; the answer may be "
                            "incomplete."});
  } else if (finish_reason == "content_filter") {
    emit(self, WarningEvent{"The provider's content filter stopped the answer."});
  }
  bool has_input = !st.pending_input.empty();
  for (auto& input : st.pending_input) {
    std::vector<EventMsg> out;
    auto item = logic.user_input(input, out);
    emit_all(self, out);
    record(self, {std::move(item)});
  }
  st.pending_input.clear();
  if (calls.empty() && !has_input) return end_task(self, false);
  send_request(self);
}

turn_executor_actor::behavior_type turn_executor_impl(executor_ptr self, conversation_actor conversation) {
  self->state.conversation = std::move(conversation);
  return {
      [=](start_atom, TaskSpec& spec) {
        auto& st = self->state;
        st.spec = std::move(spec);
        st.history = std::move(st.spec.history);
        st.logic = std::make_unique<TurnLogic>(st.spec.conversation_id, st.spec.sub_id);
        emit(self, TaskStartedEvent{st.spec.config.model_context_window});
        std::vector<EventMsg> out;
        auto item = st.logic->user_input(st.spec.input, out);
        record(self, {std::move(item)});
        emit_all(self, out);
        flush(self);
        send_request(self);
      },
      [=](interrupt_atom) { end_task(self, true); },
      [=](InjectInput& in) { self->state.pending_input.push_back(std::move(in.items)); },
      [=](ModelEvents& batch) {
        auto& st = self->state;
        if (st.done || batch.seq != st.seq) return;
        std::vector<EventMsg> out;
        st.logic->on_model_events(batch.events, out);
        emit_all(self, out);
        if (st.logic->response_complete()) on_response_complete(self);
        flush(self);
      },
      [=](ModelRetrying& r) {
        auto& st = self->state;
        if (st.done || r.seq != st.seq) return;
        st.logic->reset_response();
        emit(self, StreamErrorEvent{r.message});
        flush(self);
      },
      [=](ModelFailed& f) {
        auto& st = self->state;
        if (st.done || f.seq != st.seq) return;
        st.streamer.reset();
        emit(self, ErrorEvent{f.message});
        end_task(self, false);
      },
  };
}

}  // namespace

turn_executor_actor spawn_turn_executor(caf::local_actor* parent, conversation_actor conversation) {
  return parent->spawn<caf::linked>(turn_executor_impl, std::move(conversation));
}

}  // namespace llmx
