// The network listener of the servers (`--listen`), built on Boost.Beast: one io thread accepts
// connections and moves messages, and knows no protocol above HTTP and WebSocket.
// - HTTP exchanges (the MCP Streamable HTTP endpoint): each request goes to a handler, which
//   answers it whole (respond) or as a stream (open_stream, stream, end_stream), from any thread.
//   A client that goes away before its answer ends is reported (dropped), so its work can stop.
// - WebSocket connections (the app-server): text messages in and out, one session per connection.
// - `GET /healthz` and `/readyz`; an `Origin` other than this machine's or the server's own is
//   403; with a token, everything else needs `Authorization: Bearer <token>` (401).
// Beast stays behind this pimpl: only the listener's .cpp files compile it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmx::transport {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;   // "POST"
  std::string target;   // "/mcp"
  HttpHeaders headers;  // names in lower case
  std::string body;
  // The header's value (the first, by lower-case name), if present.
  std::optional<std::string_view> header(std::string_view lower_name) const;
};

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;  // Content-Type and the like; Content-Length is added
  std::string body;
};

class HttpListener {
 public:
  struct Handlers {
    // An HTTP request for this server: answer it with respond(), or open_stream() and stream().
    std::function<void(uint64_t exchange, HttpRequest request)> request;
    // The client of an exchange went away before its answer ended.
    std::function<void(uint64_t exchange)> dropped;
    // WebSocket connections; without `ws_message`, upgrades are refused.
    std::function<void(uint64_t conn)> ws_opened;                     // a handshake completed
    std::function<void(uint64_t conn, std::string text)> ws_message;  // one text message
    std::function<void(uint64_t conn)> ws_closed;                     // the connection is gone
  };
  struct Options {
    std::string token;                           // required as a bearer token when set
    // Reached as this machine only (bound to loopback): a Host header naming anything else is a
    // DNS-rebinding page's request, refused with 403.
    bool local_only = true;
    size_t max_body = 16 * 1024 * 1024;          // bytes of an HTTP request body (413 past it)
    size_t max_message = 64 * 1024 * 1024;       // bytes of a WebSocket message
    size_t max_connections = 512;                // below the usual 1024 open files
    size_t max_queued = 16 * 1024 * 1024;        // bytes waiting for a slow client: past it, it is dropped
    std::chrono::seconds idle_timeout{60};       // a kept-alive connection without a request
    std::chrono::seconds request_timeout{10};    // a request, once begun, arrives whole (slow clients are cut)
    std::chrono::seconds write_timeout{60};      // one write to a client that does not read
    // Written into a streamed answer every heartbeat_interval (for SSE, a comment), so proxies
    // and clients do not take a quiet stream for a dead one.
    std::string heartbeat;
    std::chrono::seconds heartbeat_interval{15};
  };

  // Listens on host:port (port 0 picks a free one) and starts the io thread. Throws
  // std::runtime_error when it cannot listen. Handlers run on the io thread.
  HttpListener(const std::string& host, uint16_t port, Handlers handlers, Options options);
  ~HttpListener();  // stop()
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  uint16_t port() const;

  // Answers an exchange whole (from any thread; ignored once it is gone).
  void respond(uint64_t exchange, HttpResponse response);
  // Starts a streamed answer (its body comes in stream() calls), for Server-Sent Events.
  void open_stream(uint64_t exchange, HttpResponse head);
  void stream(uint64_t exchange, std::string bytes);
  void end_stream(uint64_t exchange);

  // Queues one WebSocket text message (from any thread; dropped when the connection is gone).
  void send(uint64_t conn, std::string text);
  // The same as a function that stays valid as long as the listener's io context does (for
  // writers that may outlive this object's scope).
  std::function<void(uint64_t conn, std::string text)> sender() const;
  // Closes a WebSocket connection after what is queued (from any thread).
  void close(uint64_t conn);
  // The same as a function, valid as long as the io context is (like sender()).
  std::function<void(uint64_t conn)> closer() const;

  // Refuses new connections (health checks say "stopping"); open ones go on.
  void stop_accepting();
  // Closes every connection and the listening socket, and joins the io thread.
  void stop();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Whether a browser page from `origin` may talk to a server reached as `host` (the Host header):
// pages of this machine, and pages of the server's own origin.
bool origin_allowed(std::string_view origin, std::string_view host);
// Whether a Host header names this machine (localhost, 127.0.0.1 or [::1], any port).
bool is_local_host(std::string_view host);

}  // namespace llmx::transport
