#include "listen_command.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "actors/mcp_http_gateway.hpp"
#include "actors/message_writer.hpp"
#include "actors/session.hpp"
#include "protocol/base/secret_env.hpp"
#include "transport/http_listener.hpp"

namespace llmx::cli {

namespace {

struct Address {
  std::string host;
  uint16_t port = 0;
};

// `SCHEME://HOST:PORT[/mcp]` -> host and port; nullopt after printing why not. Off loopback a
// token is required.
std::optional<Address> listen_address(const std::string& url, std::string_view scheme, bool has_token) {
  auto fail = [&](std::string_view why) {
    fmt::print(stderr, "error: --listen {}: {}\n", url, why);
    return std::nullopt;
  };
  if (!url.starts_with(scheme)) return fail(fmt::format("expected {}HOST:PORT", scheme));
  auto rest = std::string_view(url).substr(scheme.size());
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    if (scheme == "ws://" || rest.substr(slash) != "/mcp") return fail("the only path is /mcp");
    rest = rest.substr(0, slash);
  }
  auto a = parse_node_address(rest);
  if (!a) return fail(fmt::format("expected {}HOST:PORT", scheme));
  if (!is_loopback_host(a->host) && !has_token)
    return fail("off this machine a client needs a token: set LLMX_LISTEN_TOKEN (or use 127.0.0.1, ::1, localhost)");
  return Address{a->host == "localhost" ? std::string("127.0.0.1") : a->host, a->port};
}

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

// The listener's settings. A server with many clients needs more than the usual 1024 open files:
// the limit is raised to its hard limit, and the connection cap follows it.
transport::HttpListener::Options listener_options(std::string token, const Address& where) {
  transport::HttpListener::Options o;
  o.token = std::move(token);
  o.local_only = is_loopback_host(where.host);
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur > 64)
    o.max_connections = std::min<size_t>(o.max_connections * 8, (lim.rlim_cur - 64) / 2);
  o.heartbeat = ":\n\n";  // an SSE comment
  return o;
}

// Waits for SIGTERM/SIGINT/SIGHUP (one that came before this call counts).
void wait_for_signal(TerminationSignals& signals) {
  std::promise<void> stop;
  std::once_flag once;
  signals.on_signal([&](int) { std::call_once(once, [&] { stop.set_value(); }); });
  if (signals.received()) std::call_once(once, [&] { stop.set_value(); });
  stop.get_future().wait();
  signals.on_signal(nullptr);
}

// Conversations end (turns aborted, commands killed, rollouts synced) while connections are
// still open, so their last events reach the clients.
void stop_engine(caf::actor_system& sys, const Engine& engine) {
  caf::scoped_actor scoped{sys};
  scoped->request(engine.manager, std::chrono::seconds(15), shutdown_atom::value)
      .receive([](bool) {}, [](caf::error&) {});
}

[[noreturn]] void exit_now() {
  std::fflush(nullptr);
  ::_exit(0);  // everything is written and synced; the stdin reader thread is not waited for
}

// The app server for WebSocket clients: one session per connection, all on one engine.
int listen_ws(caf::actor_system& sys, const Engine& engine, const ServeOptions& options, TerminationSignals& signals,
              const Address& where, transport::HttpListener::Options lo) {
  std::mutex mu;
  std::map<uint64_t, session_actor> sessions;  // by connection
  transport::HttpListener* listener = nullptr;  // set before the first connection can open
  transport::HttpListener::Handlers handlers;
  handlers.ws_opened = [&](uint64_t conn) {
    std::lock_guard lock(mu);
    auto send = listener->sender();
    auto close = [closer = listener->closer(), conn] { closer(conn); };
    // The session's end (its writer told to stop) closes its connection.
    auto writer = spawn_message_writer(sys, [send, conn](std::string m) { send(conn, std::move(m)); }, close);
    SessionOptions so{options.overrides};
    so.owns_engine = false;
    so.models = engine.models;
    auto session = spawn_app_session(sys, writer, engine.manager, engine.store, so);
    // A session that dies of an error never tells its writer: its connection closes here instead.
    caf::actor_cast<caf::actor>(session)->attach_functor([close](const caf::error& reason) {
      if (reason != caf::exit_reason::normal) close();
    });
    sessions[conn] = session;
  };
  handlers.ws_message = [&](uint64_t conn, std::string text) {
    std::lock_guard lock(mu);
    if (auto it = sessions.find(conn); it != sessions.end()) caf::anon_send(it->second, line_atom::value, std::move(text));
  };
  handlers.ws_closed = [&](uint64_t conn) {
    std::lock_guard lock(mu);
    if (auto it = sessions.find(conn); it != sessions.end()) {
      caf::anon_send(it->second, eof_atom::value);
      sessions.erase(it);
    }
  };
  std::unique_ptr<transport::HttpListener> owned;
  {
    std::lock_guard lock(mu);
    try {
      owned = std::make_unique<transport::HttpListener>(where.host, where.port, std::move(handlers), std::move(lo));
    } catch (const std::exception& err) {
      fmt::print(stderr, "error: {}\n", err.what());
      return 1;
    }
    listener = owned.get();
  }
  fmt::print("listening ws://{}:{}\n", url_host(where.host), owned->port());
  std::fflush(stdout);
  wait_for_signal(signals);
  owned->stop_accepting();
  stop_engine(sys, engine);
  owned->stop();  // connections close: their sessions end
  exit_now();
}

// The MCP server for Streamable HTTP clients.
int listen_http(caf::actor_system& sys, const Engine& engine, const ServeOptions& options,
                TerminationSignals& signals, const Address& where, transport::HttpListener::Options lo,
                mcp_task_board_actor tasks) {
  SessionOptions so{options.overrides, tasks, ""};
  so.models = engine.models;
  McpHttpGateway gateway(sys, engine.manager, engine.store, so);
  uint16_t port = 0;
  try {
    port = gateway.listen(where.host, where.port, std::move(lo));
  } catch (const std::exception& err) {
    fmt::print(stderr, "error: {}\n", err.what());
    return 1;
  }
  fmt::print("listening http://{}:{}/mcp\n", url_host(where.host), port);
  std::fflush(stdout);
  wait_for_signal(signals);
  gateway.listener().stop_accepting();
  gateway.shutdown();
  stop_engine(sys, engine);
  gateway.listener().stop();
  exit_now();
}

}  // namespace

int listen(caf::actor_system& sys, const Engine& engine, const ServeOptions& options, TerminationSignals& signals,
           bool app, mcp_task_board_actor tasks) {
  // Sealed like every secret at start-up: the commands the agent runs never see it.
  const char* sealed = env_value("LLMX_LISTEN_TOKEN");
  std::string token = sealed ? sealed : "";
  auto where = listen_address(options.listen, app ? "ws://" : "http://", !token.empty());
  if (!where) return 2;
  auto lo = listener_options(std::move(token), *where);
  return app ? listen_ws(sys, engine, options, signals, *where, std::move(lo))
             : listen_http(sys, engine, options, signals, *where, std::move(lo), std::move(tasks));
}

}  // namespace llmx::cli
