// The rollout store actor (see actors.hpp): the one owner of stored threads in this process.
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// Spawned detached: it blocks on the disk, never on a scheduler thread.
rollout_store_actor spawn_rollout_store(caf::actor_system& sys);

// The text of an error a store or manager reply carried (its message, not CAF's rendering),
// and whether it blames the request (bad id, unknown thread, invalid cursor) rather than us.
std::string error_text(const caf::error& err);
bool is_request_error(const caf::error& err);

}  // namespace llmx
