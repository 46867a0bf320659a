// The rollout store actor (see actors.hpp): the one owner of stored threads in this process.
#pragma once

#include "actors/actors.hpp"
#include "actors/refusal.hpp"

namespace llmx {

// Spawned detached: it blocks on the disk, never on a scheduler thread.
rollout_store_actor spawn_rollout_store(caf::actor_system& sys);

// The last step of a manager's shutdown: the conversations it waits for are gone and their last
// lines are queued at the store; write them out (at most 30 s), then go on with `done`.
template <class Self, class F>
void sync_store_then(Self* self, const rollout_store_actor& store, F done) {
  self->request(store, std::chrono::seconds(30), sync_atom::value)
      .then([=](bool) mutable { done(); }, [=](caf::error&) mutable { done(); });
}

}  // namespace llmx
