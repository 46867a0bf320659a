// The MCP server session (protocol.md §2, DECISIONS P1–P6): one per stdio client.
#pragma once

#include "actors/actors.hpp"

namespace llmx {

struct McpSessionOptions {
  ConfigOverrides base_overrides;  // from the command line (-c, --model...)
};

session_actor spawn_mcp_session(caf::actor_system& sys, line_writer_actor writer,
                                conversation_manager_actor manager, rollout_store_actor store,
                                McpSessionOptions options);

}  // namespace llmx
