#include "actors/listeners.hpp"

#include "protocol/base/ids.hpp"

namespace llmx {

std::string Listeners::add(const std::string& conversation_id, bool raw_events) {
  auto id = new_uuid_v4();
  by_id_[id] = conversation_id;
  by_conversation_[conversation_id][id] = raw_events;
  return id;
}

bool Listeners::remove(const std::string& subscription_id) {
  auto it = by_id_.find(subscription_id);
  if (it == by_id_.end()) return false;
  auto conv = by_conversation_.find(it->second);
  if (conv != by_conversation_.end()) {
    conv->second.erase(subscription_id);
    if (conv->second.empty()) by_conversation_.erase(conv);
  }
  by_id_.erase(it);
  return true;
}

void Listeners::forget(const std::string& conversation_id) {
  auto conv = by_conversation_.find(conversation_id);
  if (conv == by_conversation_.end()) return;
  for (const auto& [id, _] : conv->second) by_id_.erase(id);
  by_conversation_.erase(conv);
}

Listeners::Interest Listeners::interest(const std::string& conversation_id, bool raw_event) const {
  Interest in;
  auto conv = by_conversation_.find(conversation_id);
  if (conv == by_conversation_.end()) return in;
  in.any = true;
  for (const auto& [_, raw] : conv->second)
    if (!raw_event || raw) ++in.copies;
  return in;
}

}  // namespace llmx
