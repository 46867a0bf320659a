// `llmx mcp-server --listen http://HOST:PORT`: MCP's Streamable HTTP transport on the listener
// (transport/http_listener.hpp), with the same MCP sessions stdio has.
// - 2025 clients (2025-03-26 to 2025-11-25) initialize a session: `Mcp-Session-Id` names it, each
//   POST is a line to it, its answer goes back on that POST (JSON, or an SSE stream that also
//   carries the request's notifications and elicitations), everything else on the GET stream,
//   and DELETE ends it.
// - 2026-07-28 requests carry their version in `_meta` and the headers: each POST is a session of
//   its own, ended with its answer. Tasks live on the server's task board, so they outlive both.
// - A POST whose client goes away cancels its request (`notifications/cancelled` to its session).
// Which line belongs where is plain code (protocol/rpc/mcp_http.hpp).
#pragma once

#include <memory>

#include "actors/session.hpp"
#include "transport/http_listener.hpp"

namespace llmx {

class McpHttpGateway {
 public:
  McpHttpGateway(caf::actor_system& sys, conversation_manager_actor manager, rollout_store_actor store,
                 SessionOptions options);
  ~McpHttpGateway();

  // Listens on host:port (port 0 picks one); the port. Throws std::runtime_error when it cannot.
  uint16_t listen(const std::string& host, uint16_t port, transport::HttpListener::Options options);
  transport::HttpListener& listener() { return *listener_; }

  // Ends every session (their requests are cancelled, their streams end).
  void shutdown();

  struct Core;

 private:
  std::shared_ptr<Core> core_;
  std::unique_ptr<transport::HttpListener> listener_;  // stopped before core_ goes
};

}  // namespace llmx
