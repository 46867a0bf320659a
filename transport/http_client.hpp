// Streaming HTTP client: one event-loop thread drives libcurl's multi interface for every
// request of the process, so thousands of concurrent model streams cost sockets, not threads.
//
// Callbacks run on the loop thread and must not block (post a message and return). For one
// request they arrive in order: on_head at most once (skipped if the transfer fails before a
// response head), on_body zero or more times, then exactly one on_done.
#pragma once

#include "protocol/base/shared_string.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmx::http {

struct Request {
  std::string method = "POST";  // "POST" or "GET" (anything else is sent as a custom method)
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  // Shared, not copied: a model request's body (the whole history) is sent again by each retry.
  SharedString body;
  long connect_timeout_ms = 10000;
  // No overall timeout: streams can be long; idle timeouts are the caller's business.
};

struct ResponseHead {
  long status = 0;  // final status; interim 1xx responses are never reported
  std::vector<std::pair<std::string, std::string>> headers;  // names as received, values trimmed
};

// Value of the first header called `name` (ASCII case-insensitive), if any.
std::optional<std::string> header(const ResponseHead& head, std::string_view name);

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void on_head(const ResponseHead& head) = 0;
  // `chunk` is exactly what the socket delivered; it is valid only during the call.
  virtual void on_body(std::string_view chunk) = 0;
  // Empty on success (any HTTP status counts as success). Otherwise "cancelled", or curl's
  // error text followed by the curl code, e.g. "Failed to connect to ... (curl 7)".
  virtual void on_done(const std::string& error) = 0;
  // Asked after each on_body: true stops reading the response until Client::release(request()),
  // for a handler whose consumers have not caught up with what it delivered.
  virtual bool hold() { return false; }

  // The transfer's id, set before the first callback.
  std::uint64_t request() const { return request_; }

 private:
  friend class Client;
  std::uint64_t request_ = 0;
};

using RequestId = std::uint64_t;  // never 0, never reused within a Client

// A handler that throws from on_head/on_body gets its transfer aborted and on_done with this.
inline constexpr std::string_view kCancelled = "cancelled";

// A quarter of RLIMIT_NOFILE's soft limit, within [64, 4096].
std::size_t default_max_connections();

// LLMX_HTTP_GATHER_US, or 2 ms: a model's deltas reach the client that much later at most.
std::chrono::microseconds default_gather();

class Client {
 public:
  struct Options {
    // CURLMOPT_MAX_TOTAL_CONNECTIONS; extra requests queue. The default leaves three quarters of
    // the open-file limit to everything else: 256 at the usual 1024, at most 4096.
    std::size_t max_connections = default_max_connections();
    std::size_t max_host_connections = 0;  // CURLMOPT_MAX_HOST_CONNECTIONS; 0 = unlimited
    bool http2 = true;  // h2 over TLS when the server offers it, HTTP/1.1 for plain http
    // After a round of the loop that delivered body bytes, the loop waits this long before the
    // next, so that bytes arriving on many streams are handed on together (LLMX_HTTP_GATHER_US).
    std::chrono::microseconds gather = default_gather();
  };

  Client();  // default options
  explicit Client(Options options);
  // Cancels everything still pending (on_done("cancelled") each), then joins the loop thread.
  // Must not be called from a handler callback.
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Thread-safe, never blocks on the network. Callbacks start on the loop thread.
  RequestId start(Request request, std::shared_ptr<Handler> handler);
  // Thread-safe. The handler gets on_done("cancelled") unless it already got on_done; nothing
  // after that. Called on the loop thread (from a callback), no further on_head/on_body follow.
  void cancel(RequestId id);
  // Thread-safe. The caller has all it wants from this transfer, but letting it end by itself
  // (its last bytes read) returns its connection to the keep-alive pool, where a cancel would
  // close it. It is cancelled if it has not ended within `grace`. The handler still gets on_done.
  void finish_within(RequestId id, std::chrono::milliseconds grace);
  // Thread-safe. Stops reading the transfer's response (true) or reads on (false), so a
  // consumer that cannot keep up holds the sender back through TCP instead of buffering: no
  // on_body while paused (the head may still come). Unknown or ended transfers are ignored.
  void pause(RequestId id, bool paused);
  // Thread-safe. Reads on after the handler's hold() (unless also paused). Unknown or ended
  // transfers, and ones not held, are ignored.
  void release(RequestId id);
  // Requests started and not yet finished with on_done.
  std::size_t active() const;

  // Process-wide instance, created on first use, torn down at static destruction.
  static Client& shared();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmx::http
