#include "actors/approval_broker.hpp"


#include <fmt/format.h>

#include "sandbox/approval.hpp"

namespace llmx {

namespace {

struct Pending {
  std::string sub_id;
  ApprovalKey key;
  caf::typed_response_promise<ApprovalReply> promise;
  uint64_t number = 0;  // matches the request's timer
};

struct BrokerState {
  BrokerState() = default;
  conversation_actor conversation;
  int64_t timeout_ms = 600000;
  sandbox::ApprovalCache cache;
  std::map<std::string, Pending> pending;  // by call id
  uint64_t requests = 0;
  static inline const char* name = "llmx.approval_broker";
};

using broker_ptr = approval_broker_actor::stateful_pointer<BrokerState>;

sandbox::ShellApprovalKey shell_key(const ApprovalKey& k) { return {k.command, k.cwd, k.escalated}; }
sandbox::PatchApprovalKey patch_key(const ApprovalKey& k) { return {{k.files.begin(), k.files.end()}}; }

bool cached(const sandbox::ApprovalCache& cache, const ApprovalKey& k) {
  return k.is_patch ? cache.approved_for_session(patch_key(k)) : cache.approved_for_session(shell_key(k));
}

void resolve(broker_ptr self, std::map<std::string, Pending>::iterator it, ApprovalReply reply) {
  if (reply.decision == ReviewDecision::approved_for_session) {
    const auto& k = it->second.key;
    if (k.is_patch)
      self->state.cache.remember(patch_key(k));
    else
      self->state.cache.remember(shell_key(k));
  }
  it->second.promise.deliver(std::move(reply));
  self->state.pending.erase(it);
}

approval_broker_actor::behavior_type broker_impl(broker_ptr self, conversation_actor conversation, int64_t timeout_ms) {
  self->state.conversation = std::move(conversation);
  self->state.timeout_ms = timeout_ms;
  return {
      [=](ApprovalRequest& req) -> caf::result<ApprovalReply> {
        auto& st = self->state;
        if (cached(st.cache, req.key))
          return ApprovalReply{ReviewDecision::approved_for_session, "approved earlier for this session"};
        auto promise = self->make_response_promise<ApprovalReply>();
        // A second request for the same call replaces the first, which is denied.
        if (auto old = st.pending.find(req.call_id); old != st.pending.end())
          resolve(self, old, ApprovalReply{ReviewDecision::denied, "superseded by a newer request"});
        auto number = ++st.requests;
        st.pending.emplace(req.call_id, Pending{req.sub_id, req.key, promise, number});
        TurnEvents ask;
        ask.events.push_back(Event{req.sub_id, std::move(req.event)});
        self->send(st.conversation, std::move(ask));
        self->delayed_send(self, std::chrono::milliseconds(std::max<int64_t>(st.timeout_ms, 1)), timeout_atom::value,
                           req.call_id, number);
        return promise;
      },
      [=](ApprovalAnswer& answer) {
        auto& p = self->state.pending;
        auto it = p.find(answer.id);
        if (it == p.end()) {
          // The reference keys answers by the turn's submission id: accept that when unambiguous.
          auto match = p.end();
          size_t n = 0;
          for (auto i = p.begin(); i != p.end(); ++i)
            if (i->second.sub_id == answer.id) {
              match = i;
              ++n;
            }
          if (n != 1) return;
          it = match;
        }
        resolve(self, it, ApprovalReply{answer.decision, "", std::move(answer.content)});
      },
      [=](timeout_atom, const std::string& call_id, uint64_t number) {
        auto it = self->state.pending.find(call_id);
        if (it == self->state.pending.end() || it->second.number != number) return;
        resolve(self, it,
                ApprovalReply{ReviewDecision::denied,
                              fmt::format("no answer to the approval request within {} s; treated as denied",
                                          self->state.timeout_ms / 1000)});
      },
      [=](cancel_atom) {
        auto& p = self->state.pending;
        while (!p.empty()) resolve(self, p.begin(), ApprovalReply{ReviewDecision::denied, "the turn ended"});
      },
  };
}

}  // namespace

approval_broker_actor spawn_approval_broker(caf::local_actor* parent, conversation_actor conversation,
                                            int64_t timeout_ms) {
  return parent->spawn<caf::linked>(broker_impl, std::move(conversation), timeout_ms);
}

}  // namespace llmx
