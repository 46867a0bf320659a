// The JSON-RPC sessions, one per stdio client: the MCP server (protocol.md §2, DECISIONS P1–P6)
// and the app server (protocol.md §3–4: v1 and v2, initialize-gated, no "jsonrpc" field).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

struct McpSessionOptions {
  ConfigOverrides base_overrides;  // from the command line (-c, --model...)
};

session_actor spawn_mcp_session(caf::actor_system& sys, line_writer_actor writer,
                                conversation_manager_actor manager, rollout_store_actor store,
                                McpSessionOptions options);

session_actor spawn_app_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, McpSessionOptions options);

}  // namespace llmx
