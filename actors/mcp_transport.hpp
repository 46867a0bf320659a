// How the MCP client actor reaches its server (engine.md §10.2): a stdio child of the shared
// process loop (newline-delimited JSON-RPC, stderr logged) or Streamable HTTP through the shared
// curl loop (POST per message, JSON or SSE answers, Mcp-Session-Id, a GET stream for what the
// server sends on its own). Either way every message of the server reaches the client actor
// as (line_atom, generation, text) and the end of the connection as (eof_atom, generation, why).
#pragma once

#include <memory>
#include <string>

#include "actors/actors.hpp"

namespace llmx {

class McpTransport {
 public:
  virtual ~McpTransport() = default;  // ends the connection (kills the child, drops the session)
  // One JSON-RPC message for the server.
  virtual void send(std::string message) = 0;
  // The handshake agreed on this protocol revision (HTTP sends it as MCP-Protocol-Version and
  // opens its GET stream now).
  virtual void established(const std::string& protocol_version) {}
};

// Starts the transport `server` selects; nullptr with `error` set when it cannot start at all
// (e.g. a bearer token variable that is not set). A child that fails to run reports eof.
std::unique_ptr<McpTransport> start_mcp_transport(const std::string& name, const McpServerConfig& server,
                                                  mcp_client_actor client, uint64_t generation, std::string& error);

// The longest message a server may send; a longer one is dropped (and noted in the log).
inline constexpr size_t kMaxMcpMessageBytes = 128u << 20;

}  // namespace llmx
