// The rollout store actor (see actors.hpp): the one owner of stored threads in this process.
#pragma once

#include "actors/actors.hpp"
#include "actors/refusal.hpp"

namespace llmx {

// Spawned detached: it blocks on the disk, never on a scheduler thread.
rollout_store_actor spawn_rollout_store(caf::actor_system& sys);

}  // namespace llmx
