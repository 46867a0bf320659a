// The conversation actor and the conversation manager (see actors.hpp for their interfaces).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// `store` owns the rollout files; the manager syncs it when shutting down.
conversation_manager_actor spawn_conversation_manager(caf::actor_system& sys, rollout_store_actor store);

}  // namespace llmx
