#include "actors/mcp_transport.hpp"

#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "protocol/base/json_writer.hpp"
#include "protocol/base/line_cutter.hpp"
#include "protocol/base/log.hpp"
#include "protocol/base/secret_env.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/mcp_server_launch.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/process.hpp"
#include "transport/http_client.hpp"
#include "transport/sse_decoder.hpp"

namespace llmx {

namespace {

// --- stdio -----------------------------------------------------------------------------------

class StdioHandler final : public sandbox::ProcessHandler {
 public:
  StdioHandler(std::string name, mcp_client_actor client, uint64_t generation)
      : name_(std::move(name)), client_(std::move(client)), generation_(generation) {}

  void on_output(sandbox::Stream stream, std::string_view bytes) override {
    if (stream == sandbox::Stream::out) {
      out_.feed(
          bytes,
          [&](std::string& line) {
            if (!line.empty()) caf::anon_send(client_, line_atom::value, generation_, std::move(line));
          },
          [&] { log::warn("MCP server `{}` sent a message over {} MiB; it was dropped", name_, kMaxMcpMessageBytes >> 20); });
    } else {
      err_.feed(
          bytes, [&](std::string& line) { if (!line.empty()) log::info("MCP server `{}`: {}", name_, line); }, [] {});
    }
  }

  void on_exit(sandbox::ExecResult r) override {
    out_.finish(  // a last message without its newline still counts
        [&](std::string& line) {
          if (!line.empty()) caf::anon_send(client_, line_atom::value, generation_, std::move(line));
        },
        [] {});
    std::string why;
    if (!r.spawn_error.empty())
      why = r.spawn_error;
    else if (r.killed)
      why = "the MCP server was stopped";
    else if (r.signal)
      why = fmt::format("the MCP server was killed by signal {}", r.signal);
    else
      why = fmt::format("the MCP server exited with status {}", r.exit_code);
    // Its last words usually say why.
    auto tail = std::string_view(r.stderr_text);
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.remove_suffix(1);
    if (auto nl = tail.rfind('\n'); nl != std::string_view::npos) tail.remove_prefix(nl + 1);
    if (!tail.empty() && r.spawn_error.empty()) why += fmt::format(" ({:.300})", tail);
    caf::anon_send(client_, eof_atom::value, generation_, std::move(why));
  }

 private:
  std::string name_;
  mcp_client_actor client_;
  uint64_t generation_;
  LineCutter out_{kMaxMcpMessageBytes}, err_{64 * 1024};
};

class StdioTransport final : public McpTransport {
 public:
  explicit StdioTransport(uint64_t id) : id_(id) {}
  ~StdioTransport() override { sandbox::shared_process_loop().kill(id_); }
  void send(std::string message) override {
    message.push_back('\n');
    sandbox::shared_process_loop().write(id_, std::move(message));
  }

 private:
  uint64_t id_;
};

std::unique_ptr<McpTransport> start_stdio(const std::string& name, const McpServerConfig& server,
                                          mcp_client_actor client, uint64_t generation) {
  sandbox::SpawnRequest req;
  req.argv.push_back(*server.command);
  req.argv.insert(req.argv.end(), server.args.begin(), server.args.end());
  auto parent = sandbox::current_process_env();
  req.env = mcp::stdio_server_env(server, std::map<std::string, std::string>(parent.begin(), parent.end()));
  std::error_code ec;
  req.cwd = server.cwd ? *server.cwd : std::filesystem::current_path(ec).string();
  req.stdin_pipe = true;
  req.max_capture_bytes = 16 * 1024;  // only the stderr tail is wanted (for the exit message)
  req.max_delta_chunks = SIZE_MAX;    // a server talks for as long as it lives
  auto handler = std::make_shared<StdioHandler>(name, std::move(client), generation);
  return std::make_unique<StdioTransport>(sandbox::shared_process_loop().spawn(std::move(req), std::move(handler)));
}

// --- Streamable HTTP ---------------------------------------------------------------------------

// What the POSTs and the GET stream of one connection share across the curl thread.
struct HttpShared {
  std::mutex mutex;
  std::string session_id;  // Mcp-Session-Id, once the server gave one
  bool closed = false;
};

// The id of a request we send, to answer it ourselves when HTTP fails.
std::optional<std::string> request_id_of(std::string_view message) {
  json::Parser p;
  try {
    auto in = rpc::classify(p.parse(message));
    if (in.kind == rpc::Incoming::Kind::request) return in.id.json;
  } catch (const json::DecodeError&) {
  }
  return std::nullopt;
}

class HttpHandler final : public http::Handler {
 public:
  HttpHandler(std::string name, std::shared_ptr<HttpShared> shared, mcp_client_actor client, uint64_t generation,
              std::optional<std::string> request_id, bool stream)
      : name_(std::move(name)),
        shared_(std::move(shared)),
        client_(std::move(client)),
        generation_(generation),
        request_id_(std::move(request_id)),
        stream_(stream) {}

  void on_head(const http::ResponseHead& head) override {
    status_ = head.status;
    if (auto sid = http::header(head, "mcp-session-id")) {
      std::lock_guard lock(shared_->mutex);
      shared_->session_id = *sid;
    }
    auto type = http::header(head, "content-type").value_or("");
    sse_ = type.find("text/event-stream") != std::string::npos;
  }

  void on_body(std::string_view chunk) override {
    if (status_ / 100 != 2) {
      if (body_.size() < 2048) body_.append(chunk.substr(0, 2048 - body_.size()));
      return;
    }
    if (sse_) {
      if (!decoder_.feed(chunk, [&](sse::Event&& e) { deliver(std::move(e.data)); })) throw std::runtime_error("SSE");
      return;
    }
    if (body_.size() + chunk.size() > kMaxMcpMessageBytes) throw std::runtime_error("too large");
    body_.append(chunk);
  }

  void on_done(const std::string& error) override {
    if (error.empty() && status_ / 100 == 2) {
      if (sse_)
        decoder_.finish([&](sse::Event&& e) { deliver(std::move(e.data)); });
      else if (!body_.empty())
        deliver(std::move(body_));
      if (!answered_ && request_id_ && status_ != 202)
        fail_request("the server closed the response without answering");
      return;
    }
    {
      std::lock_guard lock(shared_->mutex);
      if (shared_->closed) return;
    }
    std::string why = !error.empty() ? std::string(error)
                                     : fmt::format("HTTP {}{}{:.300}", status_, body_.empty() ? "" : ": ", body_);
    if (status_ == 404 && !stream_) {
      std::lock_guard lock(shared_->mutex);
      if (!shared_->session_id.empty()) {  // the session is gone: a new connection is needed
        caf::anon_send(client_, eof_atom::value, generation_, "the MCP server ended the session (HTTP 404)");
        return;
      }
    }
    if (stream_) {
      if (status_ != 405) log::info("MCP server `{}`: the event stream ended: {}", name_, why);
      return;
    }
    if (request_id_) fail_request(why);
  }

 private:
  void deliver(std::string data) {
    if (data.empty()) return;
    // The answer to our request (not a request or notification of the server's own).
    if (request_id_ && data.find("\"method\"") == std::string::npos &&
        (data.find("\"result\"") != std::string::npos || data.find("\"error\"") != std::string::npos))
      answered_ = true;
    caf::anon_send(client_, line_atom::value, generation_, std::move(data));
  }
  void fail_request(const std::string& why) {
    json::Writer w;
    w.begin_object().field("jsonrpc", "2.0").key("id").raw(*request_id_);
    w.key("error").begin_object().field("code", static_cast<int64_t>(rpc::kInternalError)).field("message", why);
    w.end_object().end_object();
    caf::anon_send(client_, line_atom::value, generation_, w.take());
  }

  std::string name_;
  std::shared_ptr<HttpShared> shared_;
  mcp_client_actor client_;
  uint64_t generation_;
  std::optional<std::string> request_id_;
  bool stream_ = false;
  long status_ = 0;
  bool sse_ = false;
  bool answered_ = false;
  std::string body_;
  sse::Decoder decoder_{kMaxMcpMessageBytes};
};

class HttpTransport final : public McpTransport {
 public:
  HttpTransport(std::string name, std::string url, std::vector<std::pair<std::string, std::string>> headers,
                mcp_client_actor client, uint64_t generation)
      : name_(std::move(name)),
        url_(std::move(url)),
        headers_(std::move(headers)),
        client_(std::move(client)),
        generation_(generation),
        shared_(std::make_shared<HttpShared>()) {}

  ~HttpTransport() override {
    std::string sid;
    {
      std::lock_guard lock(shared_->mutex);
      shared_->closed = true;
      sid = shared_->session_id;
    }
    auto& http = http::Client::shared();
    if (stream_) http.cancel(*stream_);
    for (auto id : requests_) http.cancel(id);
    if (!sid.empty()) {  // the spec asks clients to end their session explicitly
      auto req = base_request("DELETE");
      http.start(std::move(req), std::make_shared<Ignore>());
    }
  }

  void send(std::string message) override {
    auto req = base_request("POST");
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("Accept", "application/json, text/event-stream");
    auto id = request_id_of(message);
    req.body = std::move(message);
    track(http::Client::shared().start(
        std::move(req), std::make_shared<HttpHandler>(name_, shared_, client_, generation_, std::move(id), false)));
  }

  void established(const std::string& protocol_version) override {
    version_ = protocol_version;
    // What the server sends on its own (list_changed, say) comes on this stream, where it has one.
    auto req = base_request("GET");
    req.headers.emplace_back("Accept", "text/event-stream");
    stream_ = http::Client::shared().start(
        std::move(req), std::make_shared<HttpHandler>(name_, shared_, client_, generation_, std::nullopt, true));
  }

 private:
  struct Ignore final : http::Handler {
    void on_head(const http::ResponseHead&) override {}
    void on_body(std::string_view) override {}
    void on_done(const std::string&) override {}
  };

  http::Request base_request(std::string method) {
    http::Request req;
    req.method = std::move(method);
    req.url = url_;
    req.headers = headers_;
    std::lock_guard lock(shared_->mutex);
    if (!shared_->session_id.empty()) req.headers.emplace_back("Mcp-Session-Id", shared_->session_id);
    if (!version_.empty()) req.headers.emplace_back("MCP-Protocol-Version", version_);
    return req;
  }
  // POSTs still streaming when the connection ends are cancelled; the list keeps the newest
  // (cancelling a finished request is a no-op, and ids are never reused).
  void track(http::RequestId id) {
    if (requests_.size() > 256) requests_.erase(requests_.begin(), requests_.begin() + 128);
    requests_.push_back(id);
  }

  std::string name_, url_;
  std::vector<std::pair<std::string, std::string>> headers_;
  mcp_client_actor client_;
  uint64_t generation_;
  std::shared_ptr<HttpShared> shared_;
  std::string version_;
  std::optional<http::RequestId> stream_;  // the GET stream
  std::vector<http::RequestId> requests_;
};

std::unique_ptr<McpTransport> start_http(const std::string& name, const McpServerConfig& server,
                                         mcp_client_actor client, uint64_t generation, std::string& error) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (server.bearer_token_env_var) {
    const char* token = env_value(server.bearer_token_env_var->c_str());
    if (!token || !*token) {
      error = fmt::format("the environment variable {} (bearer_token_env_var) is not set", *server.bearer_token_env_var);
      return nullptr;
    }
    headers.emplace_back("Authorization", std::string("Bearer ") + token);
  }
  for (const auto& [k, v] : server.http_headers) headers.emplace_back(k, v);
  for (const auto& [k, var] : server.env_http_headers)
    if (const char* value = env_value(var.c_str()); value && *value) headers.emplace_back(k, value);
  return std::make_unique<HttpTransport>(name, *server.url, std::move(headers), std::move(client), generation);
}

}  // namespace

std::unique_ptr<McpTransport> start_mcp_transport(const std::string& name, const McpServerConfig& server,
                                                  mcp_client_actor client, uint64_t generation, std::string& error) {
  if (server.is_stdio()) return start_stdio(name, server, std::move(client), generation);
  if (server.url) return start_http(name, server, std::move(client), generation, error);
  error = "invalid transport: neither `command` nor `url` is set";
  return nullptr;
}

}  // namespace llmx
