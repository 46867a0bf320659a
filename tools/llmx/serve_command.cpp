#include "serve_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <vector>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <cstdlib>

#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/mcp_task_board.hpp"
#include "actors/message_writer.hpp"
#include "actors/session.hpp"
#include "transport/curl_api.hpp"
#include "transport/ws_listener.hpp"
#include "termination.hpp"
#include "actors/stdio_transport.hpp"

namespace llmx::cli {

namespace {

// Runs one stdio session (MCP or app server) until the client closes stdin.
// The worker nodes to place conversations on (--nodes, else [cluster] nodes); nullopt after
// printing why they cannot be used.
std::optional<ClusterOptions> cluster_options(const std::vector<std::string>& nodes, const ClusterConfig& cluster,
                                              TlsFiles& tls) {
  ClusterOptions out;
  tls = TlsFiles{cluster.cert, cluster.key, cluster.cafile};
  out.tls = tls.enabled();
  if (out.tls && (tls.key.empty() || tls.cafile.empty())) {
    fmt::print(stderr, "error: [cluster] TLS needs cert, key and cafile\n");
    return std::nullopt;
  }
  for (const auto& text : nodes.empty() ? cluster.nodes : nodes) {
    auto a = parse_node_address(text);
    if (!a) {
      fmt::print(stderr, "error: a node is HOST:PORT, not `{}`\n", text);
      return std::nullopt;
    }
    if (!out.tls && !is_loopback_host(a->host)) {
      fmt::print(stderr, "error: node {} is not on this machine: set [cluster] cert, key and cafile to reach it over TLS\n",
                 text);
      return std::nullopt;
    }
    out.nodes.push_back(*a);
  }
  return out;
}

// `ws://HOST:PORT` -> host and port (loopback hosts only: off this machine a client would need a
// token, which comes with the HTTP listener); nullopt after printing why not.
std::optional<std::pair<std::string, uint16_t>> listen_address(const std::string& url) {
  constexpr std::string_view scheme = "ws://";
  auto fail = [&](std::string_view why) {
    fmt::print(stderr, "error: --listen {}: {}\n", url, why);
    return std::nullopt;
  };
  if (!url.starts_with(scheme)) return fail("the app-server listens on ws://HOST:PORT");
  auto a = parse_node_address(url.substr(scheme.size()));
  if (!a) return fail("expected ws://HOST:PORT");
  if (!is_loopback_host(a->host)) return fail("only loopback addresses (127.0.0.1, ::1, localhost)");
  return std::pair{a->host == "localhost" ? std::string("127.0.0.1") : a->host, a->port};
}

// The app server for WebSocket clients: one session per connection, all on one engine, until
// SIGTERM/SIGINT/SIGHUP. The first stdout line says where it listens.
int listen_ws(caf::actor_system& sys, const Engine& engine, const ServeOptions& options, TerminationSignals& signals,
              const std::pair<std::string, uint16_t>& where) {
  std::mutex mu;
  std::map<uint64_t, session_actor> sessions;  // by connection
  // Set before the first connection can open (the io thread starts in the listener's constructor,
  // handlers wait for it under `mu`).
  std::function<void(uint64_t, std::string)> send;
  transport::WsListener::Handlers handlers;
  handlers.opened = [&](uint64_t conn) {
    std::lock_guard lock(mu);
    auto writer = spawn_message_writer(sys, [send, conn](std::string m) { send(conn, std::move(m)); });
    SessionOptions so{options.overrides};
    so.owns_engine = false;
    sessions[conn] = spawn_app_session(sys, writer, engine.manager, engine.store, so);
  };
  handlers.message = [&](uint64_t conn, std::string text) {
    std::lock_guard lock(mu);
    if (auto it = sessions.find(conn); it != sessions.end()) caf::anon_send(it->second, line_atom::value, std::move(text));
  };
  handlers.closed = [&](uint64_t conn) {
    std::lock_guard lock(mu);
    if (auto it = sessions.find(conn); it != sessions.end()) {
      caf::anon_send(it->second, eof_atom::value);
      sessions.erase(it);
    }
  };
  // A signal from here on ends the server, even one that comes before the first line is read.
  std::promise<void> stop;
  std::once_flag once;
  signals.on_signal([&](int) { std::call_once(once, [&] { stop.set_value(); }); });
  if (signals.received()) std::call_once(once, [&] { stop.set_value(); });
  std::unique_ptr<transport::WsListener> listener;
  {
    std::lock_guard lock(mu);  // no connection opens before `send` is set
    try {
      listener = std::make_unique<transport::WsListener>(where.first, where.second, std::move(handlers));
    } catch (const std::exception& err) {
      fmt::print(stderr, "error: {}\n", err.what());
      return 1;
    }
    send = listener->sender();
  }
  auto host = where.first.find(':') != std::string::npos ? "[" + where.first + "]" : where.first;
  fmt::print("listening ws://{}:{}\n", host, listener->port());
  std::fflush(stdout);
  stop.get_future().wait();
  signals.on_signal(nullptr);
  listener->stop();  // connections close: their sessions end
  {
    caf::scoped_actor scoped{sys};
    scoped->request(engine.manager, std::chrono::seconds(15), shutdown_atom::value)
        .receive([](bool) {}, [](caf::error&) {});
  }
  std::fflush(nullptr);
  ::_exit(0);  // everything is written and synced; the stdin reader thread is not waited for
}

int serve(const ServeOptions& options, bool app) {
  // Fail fast on a broken config.toml, before any message is read.
  ClusterOptions cluster;
  TlsFiles tls;
  try {
    auto cfg = load_config(options.overrides);
    for (const auto& w : cfg.warnings) fmt::print(stderr, "warning: {}\n", w);
    auto c = cluster_options(options.nodes, cfg.cluster, tls);
    if (!c) return 2;
    cluster = std::move(*c);
  } catch (const std::exception& err) {
    fmt::print(stderr, "error: {}\n", err.what());
    return 1;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away must not kill in-flight work
  TerminationSignals signals;     // before the actor system: its threads inherit the block
  caf::actor_system_config cfg;
  configure_system(cfg);
  const bool clustered = !cluster.nodes.empty();
  if (clustered) configure_network(cfg, tls);
  caf::actor_system sys{cfg};
  auto engine = clustered ? start_cluster_engine(sys, std::move(cluster)) : start_engine(sys);
  if (!options.listen.empty()) {
    auto where = listen_address(options.listen);
    if (!where) return 2;
    return listen_ws(sys, engine, options, signals, *where);
  }
  auto writer = spawn_line_writer(sys);
  // MCP tasks outlive a request but not the server: the board ends with the session.
  auto tasks = app ? mcp_task_board_actor{} : spawn_mcp_task_board(sys);
  auto session = app ? spawn_app_session(sys, writer, engine.manager, engine.store, SessionOptions{options.overrides})
                     : spawn_mcp_session(sys, writer, engine.manager, engine.store,
                                         SessionOptions{options.overrides, tasks, ""});
  spawn_stdio_reader(sys, session);
  {
    // The session ends at EOF, or on SIGTERM/SIGINT/SIGHUP like at EOF without waiting for the
    // client: conversations shut down (turns aborted, commands killed), rollouts synced, output
    // flushed.
    caf::scoped_actor self{sys};
    self->monitor(session);
    signals.on_signal([session](int) { caf::anon_send(session, shutdown_atom::value); });
    self->receive([](caf::down_msg&) {});
  }
  signals.on_signal(nullptr);
  if (tasks) caf::anon_send_exit(tasks, caf::exit_reason::user_shutdown);
  if (signals.received()) {
    // Everything is written; the stdin reader may still block in read(), so do not wait for it.
    std::fflush(nullptr);
    ::_exit(0);
  }
  sys.await_all_actors_done();
  http::finish_preload();
  if (clustered) {
    // Everything is written and synced. Nodes still hold references to our store (it was sent
    // to them), which CAF keeps alive until their connections close: destroying the actor system
    // would wait for that store's thread forever.
    std::fflush(nullptr);
    ::_exit(0);
  }
  return 0;
}

}  // namespace

int run_mcp_server(const ServeOptions& options) { return serve(options, false); }

int run_app_server(const ServeOptions& options) { return serve(options, true); }

int run_prettier(const std::string& prettier, const std::string& dir) {
  std::vector<std::string> args{prettier, "--write"};
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".ts") args.push_back(e.path().string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace llmx::cli
