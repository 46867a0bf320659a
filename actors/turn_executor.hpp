// The turn executor actor: runs one task of a conversation (see actors.hpp).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// Spawns an executor linked to its conversation (`parent`). `mcp` finds the configured MCP
// servers' clients (a task waits for their start-up before its first request).
turn_executor_actor spawn_turn_executor(caf::local_actor* parent, conversation_actor conversation,
                                        approval_broker_actor broker, mcp_hub_actor mcp,
                                        model_registry_actor models);

}  // namespace llmx
