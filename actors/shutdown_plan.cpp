#include "actors/shutdown_plan.hpp"

namespace llmx {

bool ShutdownPlan::started(const std::string& id) {
  if (!engaged_.insert(id).second) return false;
  return phase_ == Phase::waiting || phase_ == Phase::syncing;
}

void ShutdownPlan::ended(const std::string& id) { engaged_.erase(id); }

std::vector<std::string> ShutdownPlan::begin() {
  phase_ = Phase::waiting;
  return {engaged_.begin(), engaged_.end()};
}

bool ShutdownPlan::sync(size_t archives) {
  if (phase_ != Phase::waiting || waits(archives)) return false;
  phase_ = Phase::syncing;
  return true;
}

bool ShutdownPlan::synced(size_t archives) {
  if (phase_ != Phase::syncing) return false;
  phase_ = waits(archives) ? Phase::waiting : Phase::answered;
  return phase_ == Phase::answered;
}

}  // namespace llmx
