// The rollout store actor (see actors.hpp): the one owner of stored threads in this process.
#pragma once

#include "actors/actors.hpp"
#include "actors/refusal.hpp"

namespace llmx {

// Spawned detached: it blocks on the disk, never on a scheduler thread.
rollout_store_actor spawn_rollout_store(caf::actor_system& sys);

// The last step of a manager's shutdown: every conversation is gone and their last lines are
// queued at the store; write them out (at most 30 s), then answer `promise` and quit.
template <class Self>
void sync_store_then_quit(Self* self, const rollout_store_actor& store, caf::typed_response_promise<bool> promise) {
  self->request(store, std::chrono::seconds(30), sync_atom::value)
      .then(
          [=](bool) mutable {
            promise.deliver(true);
            self->quit();
          },
          [=](caf::error&) mutable {
            promise.deliver(true);
            self->quit();
          });
}

}  // namespace llmx
