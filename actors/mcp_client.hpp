// The MCP client and hub actors (see actors.hpp for their interfaces): the client moves one
// server's messages between its transport (actors/mcp_transport.hpp) and the plain connection
// (protocol/rpc/mcp_connection.hpp); the hub finds or starts clients by configuration.
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// A client linked to its hub (it ends with the hub).
mcp_client_actor spawn_mcp_client(caf::local_actor* hub, std::string name, McpServerConfig config);

mcp_hub_actor spawn_mcp_hub(caf::actor_system& sys);

}  // namespace llmx
