// The JSON-RPC sessions, one per stdio client: the MCP server (protocol.md §2, DECISIONS P1–P6)
// and the app server (protocol.md §3–4: v1 and v2, initialize-gated, no "jsonrpc" field).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actors/actors.hpp"
#include "protocol/base/schema_gen.hpp"
#include "protocol/rpc/handshake.hpp"

namespace llmx {

struct SessionOptions {
  ConfigOverrides base_overrides;  // from the command line (-c, --model...)
  mcp_task_board_actor tasks;      // the MCP server's task board (none: tool calls are never tasks)
  std::string principal;           // who the client is, for the tasks it may see ("" on stdio)
  // The session's end shuts the engine down (stdio: one client, one engine). A listener's
  // sessions share the engine: theirs only closes their connection.
  bool owns_engine = true;
  model_registry_actor models;  // what providers serve (none: model/list shows the built-in table)
  // `initialize` was already answered (stdio: before the engine started): the session starts
  // initialized with what the client declared.
  std::optional<rpc::Handshake> handshake;
};

session_actor spawn_mcp_session(caf::actor_system& sys, line_writer_actor writer,
                                conversation_manager_actor manager, rollout_store_actor store,
                                SessionOptions options);

session_actor spawn_app_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, SessionOptions options);

// `llmx acp`: the Agent Client Protocol v1 (agentclientprotocol.com) for editors.
session_actor spawn_acp_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, SessionOptions options);

enum class Server { mcp, app };

// The methods a server serves, in binding order; `exported_only` leaves out MCP's own methods
// (their schema is the MCP specification's).
std::vector<std::string> served_methods(Server server, bool exported_only);

// The app server's exported methods with their params types, as the `ClientRequest` union of the
// schema export (protocol/rpc/wire_catalog.hpp): the export is made from the table that serves.
void export_client_requests(schema::Registry& reg, const std::string& union_name);

}  // namespace llmx
