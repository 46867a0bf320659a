// The conversation actor and the conversation manager (see actors.hpp for their interfaces).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

conversation_manager_actor spawn_conversation_manager(caf::actor_system& sys);

}  // namespace llmx
