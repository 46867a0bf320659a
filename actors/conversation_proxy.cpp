// The conversation proxy (see actors.hpp and node.hpp): a front's stable handle for a
// conversation on a worker node.
#include "actors/conversation_proxy.hpp"

#include <fmt/format.h>

#include "actors/refusal.hpp"

namespace llmx {

namespace {

struct ProxyState {
  ProxyState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  ProxyStart start;
  conversation_actor remote;  // empty while the node is lost and before re-placement
  std::set<event_sink_actor> sinks;
  std::optional<std::string> running;  // the submission id of the running turn
  bool placing = false;
  struct Waiting {
    Submission submission;
    caf::typed_response_promise<std::string> promise;
  };
  std::vector<Waiting> waiting;  // ops that arrived while the conversation had no node
  static inline const char* name = "llmx.conversation_proxy";
};

using proxy_ptr = conversation_proxy_actor::stateful_pointer<ProxyState>;

void fan_out(proxy_ptr self, const ConversationEvents& batch) {
  for (const auto& sink : self->state.sinks) self->send(sink, batch);
}

void attach_remote(proxy_ptr self, conversation_actor remote, std::string node) {
  auto& st = self->state;
  st.remote = std::move(remote);
  st.start.node = std::move(node);
  self->monitor(st.remote);
  self->send(st.remote, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
}

// The node is gone: a running turn ends as a failed one does on a node (error, then
// task_complete). Neither event is persisted (engine.md §9.3): the rollout holds what the node
// recorded up to its loss, and the next op resumes from it.
void node_lost(proxy_ptr self, const std::string& why) {
  auto& st = self->state;
  st.remote = conversation_actor{};
  if (!st.running) return;
  ConversationEvents batch{st.start.id, {}};
  batch.events.push_back(Event{*st.running, ErrorEvent{fmt::format(
                                                "the worker node {} running this conversation was lost ({}); the turn "
                                                "ended. Send another message to continue on a live node.",
                                                st.start.node, why)}});
  batch.events.push_back(Event{*st.running, TaskCompleteEvent{}});
  st.running.reset();
  fan_out(self, batch);
}

void forward(proxy_ptr self, Submission s, caf::typed_response_promise<std::string> promise) {
  self->request(self->state.remote, caf::infinite, submit_atom::value, std::move(s))
      .then([=](std::string& id) mutable { promise.deliver(std::move(id)); },
            [=](caf::error& err) mutable { promise.deliver(std::move(err)); });
}

// Resumes the conversation from its stored rollout on a live node, then sends what waited.
void place_again(proxy_ptr self) {
  auto& st = self->state;
  if (st.placing) return;
  st.placing = true;
  ResumeThread req{st.start.config, ThreadRef{st.start.config.llmx_home, st.start.id, st.start.rollout_path}, {}};
  self->request(st.start.cluster, std::chrono::seconds(60), place_atom::value, std::move(req))
      .then(
          [=](conversation_actor& conv, std::string& node) {
            auto& st = self->state;
            st.placing = false;
            attach_remote(self, std::move(conv), std::move(node));
            for (auto& w : std::exchange(st.waiting, {})) forward(self, std::move(w.submission), w.promise);
          },
          [=](caf::error& err) {
            auto& st = self->state;
            st.placing = false;
            for (auto& w : std::exchange(st.waiting, {}))
              w.promise.deliver(refuse(Refusal::internal, "this conversation's node was lost and it could not be "
                                                          "resumed on another: " + error_text(err)));
          });
}

conversation_proxy_actor::behavior_type proxy_impl(proxy_ptr self, ProxyStart start, conversation_actor remote) {
  self->state.start = std::move(start);
  attach_remote(self, std::move(remote), self->state.start.node);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (!st.remote || dm.source != st.remote.address()) return;
    // A conversation that ended on its own (shutdown, archive) ends its proxy; anything else
    // means its node or the link to it is gone.
    if (dm.reason == caf::exit_reason::normal || dm.reason == caf::exit_reason::user_shutdown) {
      self->quit();
      return;
    }
    node_lost(self, to_string(dm.reason));
  });
  return {
      [=](submit_atom, Submission& s) -> caf::result<std::string> {
        auto& st = self->state;
        auto promise = self->make_response_promise<std::string>();
        if (st.remote) {
          forward(self, std::move(s), promise);
        } else if (s.op.is<ShutdownOp>()) {
          // Nothing runs anywhere: the conversation is already as shut down as it gets.
          if (s.id.empty()) s.id = "shutdown";
          promise.deliver(s.id);
          fan_out(self, ConversationEvents{st.start.id, {Event{s.id, ShutdownCompleteEvent{}}}});
          self->quit();
        } else {
          st.waiting.push_back({std::move(s), promise});
          place_again(self);
        }
        return promise;
      },
      [=](subscribe_atom, event_sink_actor& sink) { self->state.sinks.insert(std::move(sink)); },
      [=](unsubscribe_atom, event_sink_actor& sink) { self->state.sinks.erase(sink); },
      [=](interrupt_atom) -> caf::result<bool> {
        if (!self->state.remote) return false;
        return self->delegate(self->state.remote, interrupt_atom::value);
      },
      [=](ConversationEvents& batch) {
        auto& st = self->state;
        for (const auto& ev : batch.events) {
          if (ev.msg.is<TaskStartedEvent>())
            st.running = ev.id;
          else if (ev.msg.is<TaskCompleteEvent>() || ev.msg.is<TurnAbortedEvent>())
            st.running.reset();
        }
        fan_out(self, batch);
      },
      // The rest of a conversation's interface is for its own turn executor and store, which
      // talk to the conversation on the node, never to its proxy.
      [=](std::vector<Event>&) {},
      [=](RecordItems&) {},
      [=](ReplaceHistory&) {},
      [=](RolloutFailed&) {},
      [=](TaskDone&) {},
  };
}

}  // namespace

conversation_proxy_actor spawn_conversation_proxy(caf::actor_system& sys, ProxyStart start, conversation_actor remote) {
  return sys.spawn(proxy_impl, std::move(start), std::move(remote));
}

}  // namespace llmx
