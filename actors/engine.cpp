#include "actors/engine.hpp"

#include "actors/conversation.hpp"

namespace llmx {

Engine start_engine(caf::actor_system& sys) { return Engine{spawn_conversation_manager(sys)}; }

}  // namespace llmx
