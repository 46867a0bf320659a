// The v1 conversation methods both servers serve (DECISIONS P1; protocol.md §3.1, §3.3–3.5):
// newConversation, sendUserMessage, sendUserTurn, interruptConversation,
// addConversationListener, removeConversationListener, and the listener stream they drive
// (`llmx/event/<type>`, execCommandApproval / applyPatchApproval, parked interrupts).
#include "actors/session_state.hpp"
#include "protocol/rpc/conversation_api.hpp"

namespace llmx::session_detail {

namespace {

void new_conversation(session_ptr self, api::NewConversationParams p, Reply<api::NewConversationResult> reply) {
  auto cfg = config_or_error(self, reply, [&] { return p.to_overrides(); });
  if (!cfg) return;
  cfg->session_source = self->state.flavor == SessionState::Flavor::app ? "vscode" : "mcp";
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(*cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            remember(self, sc.session_id, conv);
            reply(api::NewConversationResult{sc.session_id, sc.model, sc.reasoning_effort, sc.rollout_path});
          },
          [=](caf::error& err) {
            reply(RpcError{rpc::kInternalError, fmt::format("error creating conversation: {}", error_text(err))});
          });
}

// v1 answers {} and then streams the turn; without items no turn would follow.
std::optional<RpcError> no_items(const std::vector<api::InputItem>& items) {
  if (!items.empty()) return std::nullopt;
  return RpcError{rpc::kInvalidParams, "Invalid params: `items` must not be empty"};
}

void send_user_message(session_ptr self, api::SendUserMessageParams p, Reply<Empty> reply) {
  if (auto bad = no_items(p.items)) return reply(*bad);
  auto items = api::to_user_inputs(p.items);
  with_conversation(self, reply, p.conversationId, [=](conversation_actor conv) {
    caf::anon_send(conv, submit_atom::value, Submission{"", UserInputOp{items}});
    reply(Empty{});
  });
}

void send_user_turn(session_ptr self, api::SendUserTurnParams p, Reply<Empty> reply) {
  if (auto bad = no_items(p.items)) return reply(*bad);
  UserTurnOp op{api::to_user_inputs(p.items), p.cwd, p.approvalPolicy, p.sandboxPolicy, p.model, p.effort,
                p.summary, {}};
  with_conversation(self, reply, p.conversationId, [=](conversation_actor conv) {
    caf::anon_send(conv, submit_atom::value, Submission{"", op});
    reply(Empty{});
  });
}

void interrupt_conversation(session_ptr self, api::ConversationIdParams p, Reply<api::InterruptConversationResult> reply) {
  auto conv_id = p.conversationId;
  with_conversation(self, reply, conv_id, [=](conversation_actor conv) {
    // The reply waits for the turn_aborted event, which this session must therefore see even
    // without a listener. Nothing running → an error now instead of a reply that never comes.
    subscribe(self, conv);
    self->request(conv, caf::infinite, interrupt_atom::value)
        .then(
            [=](bool was_running) {
              if (was_running)
                self->state.interrupt_waiters.emplace(
                    conv_id, [reply](TurnAbortReason reason) { reply(api::InterruptConversationResult{reason}); });
              else
                reply(RpcError{rpc::kInvalidRequest, fmt::format("conversation {} has no running turn", conv_id)});
            },
            [=](caf::error& err) { reply(RpcError{rpc::kInternalError, error_text(err)}); });
  });
}

void add_listener(session_ptr self, api::AddConversationListenerParams p, Reply<api::AddConversationListenerResult> reply) {
  auto conv_id = p.conversationId;
  bool raw = p.experimentalRawEvents.value_or(false);
  with_conversation(self, reply, conv_id, [=](conversation_actor conv) {
    subscribe(self, conv);
    reply(api::AddConversationListenerResult{self->state.listeners.add(conv_id, raw)});
  });
}

void remove_listener(session_ptr self, api::RemoveConversationListenerParams p, Reply<Empty> reply) {
  if (!self->state.listeners.remove(p.subscriptionId))
    return reply(RpcError{rpc::kInvalidRequest, fmt::format("subscription not found: {}", p.subscriptionId)});
  reply(Empty{});
}

}  // namespace

void forward_to_listeners(session_ptr self, const std::string& conversation_id, const Event& ev, bool skip_approvals,
                          std::string& lines) {
  auto& st = self->state;
  if (auto* aborted = ev.msg.get_if<TurnAbortedEvent>()) {
    auto [b, e] = st.interrupt_waiters.equal_range(conversation_id);
    if (b != e && !lines.empty()) {  // the answers follow what came before them
      write(self, std::move(lines));
      lines.clear();
    }
    for (auto it = b; it != e; ++it) it->second(aborted->reason);
    st.interrupt_waiters.erase(b, e);
  }
  auto interest = st.listeners.interest(conversation_id, ev.msg.is<RawResponseItemEvent>());
  if (interest.copies > 0) {
    // Encoded once, in place, for however many listeners want it.
    next_line(lines);
    const size_t begin = lines.size();
    st.listener_deltas.append(lines, conversation_id, ev, [&](std::string& out, const Event& e) {
      api::append_event_notification(st.rpc, out, e, conversation_id);
    });
    const size_t length = lines.size() - begin;
    for (size_t i = 1; i < interest.copies; ++i) {
      next_line(lines);
      lines.append(lines, begin, length);
    }
  }
  // v2 notifications follow the event they derive from (turn/completed is a turn's last line).
  if (auto t = st.v2_threads.find(conversation_id); t != st.v2_threads.end()) {
    auto& notes = st.notes;  // kept: its buffer has grown already
    notes.clear();
    t->second.translate(ev, notes);
    add_notes(st.rpc, lines, notes);
  }
  if (!interest.any || skip_approvals) return;
  auto conv = st.conversations.find(conversation_id);
  if (conv == st.conversations.end()) return;
  if (auto ask = approval_ask(ev, conversation_id, nullptr)) ask_approval(self, conv->second, *ask, lines);
}

void bind_conversation_methods(Methods& t) {
  t.bind<api::NewConversationParams, api::NewConversationResult>("newConversation", new_conversation);
  t.bind<api::SendUserMessageParams, Empty>("sendUserMessage", send_user_message);
  t.bind<api::SendUserTurnParams, Empty>("sendUserTurn", send_user_turn);
  t.bind<api::ConversationIdParams, api::InterruptConversationResult>("interruptConversation", interrupt_conversation);
  t.bind<api::AddConversationListenerParams, api::AddConversationListenerResult>("addConversationListener",
                                                                                 add_listener);
  t.bind<api::RemoveConversationListenerParams, Empty>("removeConversationListener", remove_listener);
}

}  // namespace llmx::session_detail
