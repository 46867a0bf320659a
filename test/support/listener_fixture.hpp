// `llmx mcp-server --listen http://127.0.0.1:0` (or `app-server --listen ws://…`) as a child
// process for integration tests, with an HTTP client (cpp-httplib) for well-formed requests and raw
// loopback sockets for the malformed, slow and numerous ones.
#pragma once

#include "tools/mock-llm/http.hpp"  // cpp-httplib with the macros its Debian build has

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "test/support/harness.hpp"

namespace llmx::test {

struct ListenOptions {
  std::string subcommand = "mcp-server";
  std::string url = "http://127.0.0.1:0";
  EnvVars env;  // on top of llmx_env()
};

class Listener {
 public:
  Listener(const std::string& llmx_home, const std::string& base_url, ListenOptions options = {});
  ~Listener();
  uint16_t port() const { return port_; }
  const std::string& endpoint() const { return endpoint_; }  // from the `listening URL` line
  ChildProcess& process() { return *proc_; }
  // A client for this server (a fresh connection pool each time).
  httplib::Client client(std::chrono::seconds read_timeout = std::chrono::seconds(20)) const;

 private:
  std::unique_ptr<ChildProcess> proc_;
  std::string endpoint_;
  uint16_t port_ = 0;
};

// The headers a Streamable HTTP client sends with every POST (JSON body, accepts JSON and SSE).
httplib::Headers mcp_headers(const std::string& session = {}, const std::string& version = {});

// The JSON-RPC messages in an SSE body (each `data:` line), or the body itself when it is JSON.
std::vector<Message> messages_of(const httplib::Result& r);
// The last of them (fails the test when there is none).
Message last_message(const httplib::Result& r);

// With LLMX_MCP_TRAFFIC_LOG set, an exchange's messages (the POSTed one, then the answer's) are
// appended there for the official-schema check (test/js/validate_mcp_wire.mjs), under its session
// (a 2026 request is a connection of its own).
void record_exchange(const httplib::Headers& request_headers, const std::string& body, const httplib::Result& r);

// A raw TCP connection to 127.0.0.1:port (closed on destruction).
class RawSocket {
 public:
  explicit RawSocket(uint16_t port);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  bool ok() const { return fd_ >= 0; }
  bool send(std::string_view bytes);
  // What arrives until the peer closes or `timeout` passes.
  std::string read_until_close(Duration timeout);
  // Whether the peer closed the connection within `timeout` (anything it sends is skipped).
  bool closed_within(Duration timeout);

 private:
  int fd_ = -1;
};

// Whether any rollout under `llmx_home` records an aborted turn (the work of a cancelled request
// stopped), waiting up to `timeout` for it.
bool some_turn_aborted(const std::string& llmx_home, Duration timeout);

}  // namespace llmx::test
