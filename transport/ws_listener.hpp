// A WebSocket listener for JSON-RPC sessions (`llmx app-server --listen ws://HOST:PORT`), built on
// Boost.Beast: one io thread accepts connections, answers `GET /healthz` and `/readyz`, upgrades
// everything else to WebSocket and moves text messages. Each connection is one session; what the
// sessions are is the caller's (the handlers), so this file knows no actors. Beast stays behind
// this pimpl: only ws_listener.cpp compiles it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace llmx::transport {

class WsListener {
 public:
  struct Handlers {
    std::function<void(uint64_t conn)> opened;                      // a WebSocket handshake completed
    std::function<void(uint64_t conn, std::string text)> message;   // one text message
    std::function<void(uint64_t conn)> closed;                      // the connection is gone
  };
  struct Limits {
    size_t max_message = 64 * 1024 * 1024;  // bytes per message
    size_t max_connections = 512;                  // below the usual 1024 open files
    size_t max_queued = 16 * 1024 * 1024;          // bytes waiting for a slow client: past it, it is dropped
  };

  // Listens on host:port (port 0 picks a free one) and starts the io thread. Throws
  // std::runtime_error when it cannot listen. Handlers run on the io thread.
  WsListener(const std::string& host, uint16_t port, Handlers handlers, Limits limits);
  WsListener(const std::string& host, uint16_t port, Handlers handlers)
      : WsListener(host, port, std::move(handlers), Limits{}) {}
  ~WsListener();  // stop()
  WsListener(const WsListener&) = delete;
  WsListener& operator=(const WsListener&) = delete;

  uint16_t port() const;
  // Queues one text message for a connection (from any thread; dropped when it is gone).
  void send(uint64_t conn, std::string text);
  // The same as a function that stays valid as long as the listener's io context does (for
  // writers that may outlive this object's scope).
  std::function<void(uint64_t conn, std::string text)> sender() const;
  // Closes a connection after what is queued (from any thread).
  void close(uint64_t conn);
  // Closes every connection and the listening socket, and joins the io thread.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace llmx::transport
