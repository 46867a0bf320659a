// The v1 `addConversationListener` subscriptions of one session, indexed by conversation so an
// event finds its listeners without a walk over all of them.
#pragma once

#include <map>
#include <string>

namespace llmx {

class Listeners {
 public:
  // A new subscription; returns its id.
  std::string add(const std::string& conversation_id, bool raw_events);
  // False when no such subscription exists.
  bool remove(const std::string& subscription_id);
  // Every subscription to a conversation (it was archived or has ended).
  void forget(const std::string& conversation_id);

  struct Interest {
    bool any = false;   // the conversation has listeners (they are asked for its approvals)
    size_t copies = 0;  // how many of them get this event (raw events only where asked for)
  };
  Interest interest(const std::string& conversation_id, bool raw_event) const;

 private:
  std::map<std::string, std::string> by_id_;                        // subscription -> conversation
  std::map<std::string, std::map<std::string, bool>> by_conversation_;  // conversation -> subscription -> raw
};

}  // namespace llmx
