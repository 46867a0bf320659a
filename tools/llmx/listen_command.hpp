// `--listen`: the servers for network clients instead of stdio. `llmx app-server --listen
// ws://HOST:PORT` (one app session per WebSocket connection) and `llmx mcp-server --listen
// http://HOST:PORT` (MCP Streamable HTTP at /mcp). Loopback by default; any other address needs
// LLMX_LISTEN_TOKEN, which clients then send as a bearer token. The first stdout line is
// `listening URL`; SIGTERM/SIGINT/SIGHUP end the server.
#pragma once

#include "actors/engine.hpp"
#include "serve_command.hpp"
#include "termination.hpp"

namespace llmx::cli {

// Serves until a signal; never returns on success (the process exits), 1 or 2 on a bad start.
int listen(caf::actor_system& sys, const Engine& engine, const ServeOptions& options, TerminationSignals& signals,
           bool app, mcp_task_board_actor tasks);

}  // namespace llmx::cli
