// What a conversation manager's shutdown waits for, as plain code. Only conversations that ran a
// task are waited for (and those being archived): the rest have nothing to finish and end after
// the reply, so an exit with 100,000 idle conversations does not wait for 100,000 actors to end
// (issue 18). The manager actor only sends what this decides.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

namespace llmx {

class ShutdownPlan {
 public:
  // A live conversation starts its first task. True when it must be told to shut down now: the
  // shutdown has begun and not answered yet (it began before the task did).
  bool started(const std::string& id);
  // A conversation is gone.
  void ended(const std::string& id);
  // The shutdown begins: the conversations to tell now (those that ran a task).
  std::vector<std::string> begin();
  // Whether the store may sync now: the shutdown waits for nothing more (`archives`: conversations
  // shutting down to be archived). True once; then it is syncing.
  bool sync(size_t archives);
  // The store has synced. True when the caller may be answered; false when a first task or an
  // archive began meanwhile (it ends first, and sync() is true again after it).
  bool synced(size_t archives);

 private:
  enum class Phase { running, waiting, syncing, answered };
  bool waits(size_t archives) const { return !engaged_.empty() || archives > 0; }
  Phase phase_ = Phase::running;
  std::unordered_set<std::string> engaged_;  // live conversations that ran a task
};

}  // namespace llmx
