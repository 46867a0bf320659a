// The conversation proxy (see actors.hpp and node.hpp): a front's stable handle for a
// conversation on a worker node.
#include "actors/conversation_proxy.hpp"
#include "protocol/base/votes.hpp"

#include <fmt/format.h>

#include "actors/refusal.hpp"

namespace llmx {

namespace {

// CAF 0.17 never answers a request that was on the wire when its connection dropped: every op
// the proxy forwards is remembered until its answer comes, and settled by the proxy when the
// node is lost instead.
struct InFlight {
  Submission submission;
  caf::typed_response_promise<std::string> promise;
};

struct ProxyState {
  ProxyState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  ProxyStart start;
  conversation_actor remote;  // empty while the node is lost and before re-placement
  std::set<event_sink_actor> sinks;
  // Warnings that came while no client listened here (a rollout that cannot be written is
  // found when the conversation starts, before anyone subscribes): told to the first subscriber,
  // as the conversation itself does.
  std::vector<Event> unheard_warnings;
  uint64_t next_sub = 0;                  // ids for ops that come without one (as a conversation)
  std::optional<std::string> running;     // the submission id of the running turn
  std::vector<std::string> unstarted;     // turn ops sent whose task_started has not come yet
  bool interrupting = false;              // an interrupt of the running turn was sent
  bool shutting_down = false;
  bool placing = false;
  bool released = false;  // the remote conversation was released: a new local sink subscribes again
  // Local sessions whose client cannot keep up: the remote conversation hears one voice, ours.
  Votes<caf::actor_addr> pressing;

  uint64_t next_flight = 0;
  std::map<uint64_t, InFlight> in_flight;  // forwarded ops not answered yet
  std::vector<InFlight> waiting;           // ops that arrived while the conversation had no node
  static inline const char* name = "llmx.conversation_proxy";
};

using proxy_ptr = conversation_proxy_actor::stateful_pointer<ProxyState>;

bool is_turn_op(const Op& op) { return op.is<UserInputOp>() || op.is<UserTurnOp>(); }

void fan_out(proxy_ptr self, const ConversationEvents& batch) {
  for (const auto& sink : self->state.sinks) self->send(sink, batch);
}

void attach_remote(proxy_ptr self, conversation_actor remote, std::string node) {
  auto& st = self->state;
  st.remote = std::move(remote);
  st.start.node = std::move(node);
  self->monitor(st.remote);
  self->send(st.remote, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
  if (st.pressing.any()) send_pause(self, st.remote, true);
}

// A local session asks to pause its conversation's model stream (or stops asking).
void press(proxy_ptr self, const caf::actor_addr& who, bool paused) {
  if (auto changed = self->state.pressing.set(who, paused); changed && self->state.remote)
    send_pause(self, self->state.remote, *changed);
}

void finish_shutdown(proxy_ptr self, const std::string& id) {
  fan_out(self, ConversationEvents{self->state.start.id, {Event{id, ShutdownCompleteEvent{}}}});
  self->quit();
}

// The turns that were running or about to start end as a failed turn ends (error, then
// task_complete), or as aborted when an interrupt was on its way. Neither event is persisted
// (engine.md §9.3): the rollout holds what the node recorded, and the next op resumes from it.
void end_turns(proxy_ptr self, const std::string& why) {
  auto& st = self->state;
  std::vector<std::string> ids = std::exchange(st.unstarted, {});
  if (st.running) ids.insert(ids.begin(), *std::exchange(st.running, std::nullopt));
  ConversationEvents batch{st.start.id, {}};
  for (const auto& id : ids) {
    if (std::exchange(st.interrupting, false)) {
      batch.events.push_back(Event{id, TurnAbortedEvent{TurnAbortReason::interrupted}});
      continue;
    }
    batch.events.push_back(Event{id, ErrorEvent{fmt::format("the worker node {} running this conversation was lost ({}); "
                                                            "the turn ended. Send another message to continue on a "
                                                            "live node.",
                                                            st.start.node, why)}});
    batch.events.push_back(Event{id, TaskCompleteEvent{}});
  }
  st.interrupting = false;
  if (!batch.events.empty()) fan_out(self, batch);
}

void node_lost(proxy_ptr self, const std::string& why) {
  auto& st = self->state;
  st.remote = conversation_actor{};
  // Forwarded ops the node never answered: their turns end below; the callers learn it now.
  for (auto& [_, f] : std::exchange(st.in_flight, {})) {
    if (is_turn_op(f.submission.op)) {
      f.promise.deliver(f.submission.id);  // taken: its turn ends with the error below
    } else if (f.submission.op.is<ShutdownOp>()) {
      f.promise.deliver(f.submission.id);
    } else {
      f.promise.deliver(refuse(Refusal::internal, "the worker node was lost before it took this op (" + why + ")"));
    }
  }
  end_turns(self, why);
  if (st.shutting_down) finish_shutdown(self, "shutdown");
}

void forward(proxy_ptr self, Submission s, caf::typed_response_promise<std::string> promise) {
  auto& st = self->state;
  const auto key = st.next_flight++;
  if (is_turn_op(s.op) && !st.running) st.unstarted.push_back(s.id);
  st.in_flight.emplace(key, InFlight{s, promise});
  self->request(st.remote, caf::infinite, submit_atom::value, std::move(s))
      .then(
          [=](std::string& id) {
            auto it = self->state.in_flight.find(key);
            if (it == self->state.in_flight.end()) return;  // settled when the node was lost
            it->second.promise.deliver(std::move(id));
            self->state.in_flight.erase(it);
          },
          [=](caf::error& err) {
            auto it = self->state.in_flight.find(key);
            if (it == self->state.in_flight.end()) return;
            it->second.promise.deliver(std::move(err));
            self->state.in_flight.erase(it);
          });
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
            if (st.shutting_down) {  // shut down while it was being placed: it ends there too
              caf::anon_send(conv, submit_atom::value, Submission{"", ShutdownOp{}});
              return finish_shutdown(self, "shutdown");
            }
            if (st.remote) {  // the cluster handed us a conversation meanwhile (see place_atom)
              if (conv != st.remote) caf::anon_send(conv, submit_atom::value, Submission{"", ShutdownOp{}});
            } else {
              attach_remote(self, std::move(conv), std::move(node));
            }
            for (auto& w : std::exchange(st.waiting, {})) forward(self, std::move(w.submission), w.promise);
          },
          [=](caf::error& err) {
            auto& st = self->state;
            st.placing = false;
            const auto why = error_text(err);
            for (auto& w : std::exchange(st.waiting, {})) {
              if (is_turn_op(w.submission.op)) {
                // The caller may only watch events (an MCP tool call): end the turn visibly.
                w.promise.deliver(w.submission.id);
                st.unstarted.push_back(w.submission.id);
              } else {
                w.promise.deliver(refuse(Refusal::internal, "this conversation's node was lost and it could not be "
                                                            "resumed on another: " + why));
              }
            }
            end_turns(self, "and no other node could resume it: " + why);
            if (st.shutting_down) finish_shutdown(self, "shutdown");
          });
}

conversation_proxy_actor::behavior_type proxy_impl(proxy_ptr self, ProxyStart start, conversation_actor remote) {
  self->state.start = std::move(start);
  attach_remote(self, std::move(remote), self->state.start.node);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    // A session that went away stops receiving.
    std::erase_if(st.sinks, [&](const event_sink_actor& s) { return s.address() == dm.source; });
    press(self, dm.source, false);
    if (!st.remote || dm.source != st.remote.address()) return;
    // A conversation that ended on its own (shutdown, archive) ends its proxy; anything else
    // means its node or the link to it is gone.
    if (dm.reason == caf::exit_reason::normal || dm.reason == caf::exit_reason::user_shutdown) {
      self->quit();
      return;
    }
    node_lost(self, dm.reason == caf::exit_reason::remote_link_unreachable ? "connection lost"
                                                                           : self->system().render(dm.reason));
  });
  return {
      [=](submit_atom, Submission& s) -> caf::result<std::string> {
        auto& st = self->state;
        auto promise = self->make_response_promise<std::string>();
        if (s.id.empty()) s.id = std::to_string(st.next_sub++);
        // What a re-placement must resume with: the settings as the ops left them.
        if (auto* o = s.op.get_if<OverrideTurnContextOp>()) apply_override(st.start.config, *o);
        if (auto* t = s.op.get_if<UserTurnOp>())
          apply_override(st.start.config,
                         OverrideTurnContextOp{t->cwd, t->approval_policy, t->sandbox_policy, t->model, t->effort, t->summary});
        if (s.op.is<InterruptOp>() && st.running) st.interrupting = true;
        if (s.op.is<ShutdownOp>()) st.shutting_down = true;
        if (st.remote) {
          forward(self, std::move(s), promise);
        } else if (s.op.is<ShutdownOp>()) {
          // Nothing runs anywhere: the conversation is as shut down as it gets.
          for (auto& w : std::exchange(st.waiting, {}))
            w.promise.deliver(refuse(Refusal::request, "the conversation was shut down"));
          promise.deliver(s.id);
          if (!st.placing) finish_shutdown(self, s.id);  // else once the placement answers
        } else if (s.op.is<SteerOp>()) {
          promise.deliver(refuse(Refusal::request, "no active turn to steer"));  // it ended with its node
        } else if (s.op.is<InterruptOp>() || s.op.is<ExecApprovalOp>() || s.op.is<PatchApprovalOp>() ||
                   s.op.is<ResolveElicitationOp>()) {
          promise.deliver(s.id);  // nothing runs that they could reach
        } else {
          st.waiting.push_back({std::move(s), promise});
          place_again(self);
        }
        return promise;
      },
      [=](subscribe_atom, event_sink_actor& sink) {
        auto& st = self->state;
        if (st.sinks.insert(sink).second) self->monitor(sink);
        if (!st.unheard_warnings.empty())
          self->send(sink, ConversationEvents{st.start.id, std::exchange(st.unheard_warnings, {})});
        if (st.released && st.remote) {
          st.released = false;
          self->send(st.remote, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
        }
      },
      [=](unsubscribe_atom, event_sink_actor& sink) {
        if (self->state.sinks.erase(sink) > 0) self->demonitor(sink.address());
        press(self, sink.address(), false);
      },
      [=](pause_atom, bool paused) {
        press(self, caf::actor_cast<caf::actor_addr>(self->current_sender()), paused);
      },
      [=](release_atom, event_sink_actor& sink) {
        auto& st = self->state;
        if (st.sinks.erase(sink) > 0) self->demonitor(sink.address());
        press(self, sink.address(), false);
        // The remote conversation has this proxy as its one subscriber: it goes when nobody here is left.
        if (st.sinks.empty() && st.remote && !st.released) {
          st.released = true;
          self->send(st.remote, release_atom::value, caf::actor_cast<event_sink_actor>(self));
        }
      },
      [](release_atom, uint64_t) {},  // the remote conversation keeps its own unload timer
      [=](sync_atom) -> caf::result<bool> {
        if (!self->state.remote) return false;  // its node is lost: the next op resumes it from its file
        auto promise = self->make_response_promise<bool>();
        self->request(self->state.remote, std::chrono::seconds(10), sync_atom::value)
            .then([=](bool has_file) mutable { promise.deliver(has_file); },
                  [=](caf::error&) mutable { promise.deliver(false); });
        return promise;
      },
      [=](interrupt_atom) -> caf::result<bool> {
        auto& st = self->state;
        if (!st.remote) return false;
        if (st.running) st.interrupting = true;
        // Bounded: an answer lost with the node must not leave the caller waiting (the turn's
        // end comes as an event either way).
        auto promise = self->make_response_promise<bool>();
        self->request(st.remote, std::chrono::seconds(10), interrupt_atom::value)
            .then([=](bool running) mutable { promise.deliver(running); },
                  [=](caf::error&) mutable { promise.deliver(false); });
        return promise;
      },
      [=](FileDelegate& d) {  // for the next turn: it goes wherever that turn's input goes
        if (self->state.remote) self->send(self->state.remote, std::move(d));
      },
      [=](status_atom) -> caf::result<std::string> {
        auto& st = self->state;
        if (!st.remote) return std::string();
        auto promise = self->make_response_promise<std::string>();
        self->request(st.remote, std::chrono::seconds(10), status_atom::value)
            .then([=](std::string& running) mutable { promise.deliver(std::move(running)); },
                  [=](caf::error&) mutable { promise.deliver(std::string()); });
        return promise;
      },
      [=](ConversationEvents& batch) {
        auto& st = self->state;
        for (const auto& ev : batch.events) {
          if (ev.msg.is<TaskStartedEvent>()) {
            st.running = ev.id;
            std::erase(st.unstarted, ev.id);
          } else if (ev.msg.is<TaskCompleteEvent>() || ev.msg.is<TurnAbortedEvent>()) {
            // Inputs sent while it ran joined this task.
            st.running.reset();
            st.unstarted.clear();
            st.interrupting = false;
          }
          if (st.sinks.empty() && ev.msg.is<WarningEvent>()) st.unheard_warnings.push_back(ev);
        }
        fan_out(self, batch);
      },
      // The cluster placed this conversation (a resume of it while its node was lost).
      [=](place_atom, conversation_actor& conv, std::string& node) {
        auto& st = self->state;
        if (st.remote) {
          if (conv != st.remote) caf::anon_send(conv, submit_atom::value, Submission{"", ShutdownOp{}});
          return;
        }
        attach_remote(self, std::move(conv), std::move(node));
      },
      // The rest of a conversation's interface is for its own turn executor and store, which
      // talk to the conversation on the node, never to its proxy.
      [=](TurnEvents&) {},
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
