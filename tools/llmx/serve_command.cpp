#include "serve_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <vector>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <cstdlib>

#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/mcp_task_board.hpp"
#include "actors/session.hpp"
#include "transport/curl_api.hpp"
#include "listen_command.hpp"
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

int serve(const ServeOptions& options, Front front) {
  const bool app = front == Front::app;
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
  // Over stdio the client's `initialize` is answered before the actor system starts, so the
  // client does not wait for it (issue 18, point 5): by the llmx binary, before it loaded us, or
  // here. What was read behind it goes on to the stdin reader.
  std::string already_read;
  std::optional<rpc::Handshake> handshake;
  if (options.listen.empty()) {
    auto first = options.first_line;
    if (!first) {
      signals.on_signal([](int) { ::_exit(0); });  // nothing runs yet
      first = answer_first_line(front);
      signals.on_signal(nullptr);
    }
    if (!first->answered.empty()) handshake = handshake_of(front, first->answered);
    already_read = std::move(first->rest);
  }
  caf::actor_system_config cfg;
  configure_system(cfg);
  const bool clustered = !cluster.nodes.empty();
  if (clustered) configure_network(cfg, tls);
  caf::actor_system sys{cfg};
  auto engine = clustered ? start_cluster_engine(sys, std::move(cluster)) : start_engine(sys);
  // MCP tasks outlive a request but not the server: the board ends with the session.
  auto tasks = front == Front::mcp ? spawn_mcp_task_board(sys) : mcp_task_board_actor{};
  if (!options.listen.empty()) return listen(sys, engine, options, signals, app, tasks);
  auto writer = spawn_line_writer(sys);
  SessionOptions so{options.overrides, front == Front::mcp ? tasks : mcp_task_board_actor{}, ""};
  so.models = engine.models;
  so.handshake = std::move(handshake);
  auto session = front == Front::app   ? spawn_app_session(sys, writer, engine.manager, engine.store, so)
                 : front == Front::acp ? spawn_acp_session(sys, writer, engine.manager, engine.store, so)
                                       : spawn_mcp_session(sys, writer, engine.manager, engine.store, so);
  spawn_stdio_reader(sys, session, STDIN_FILENO, std::move(already_read));
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
  // Every conversation that ran a task has ended, its rollout synced, and the output is flushed.
  // Those that never ran one may still be ending (there may be 100,000): they have nothing to
  // write, so they are not waited for. The MCP servers are stopped first; a command still
  // running dies with us (its process was started with PR_SET_PDEATHSIG).
  {
    caf::scoped_actor self{sys};
    self->monitor(engine.mcp);
    caf::anon_send_exit(engine.mcp, caf::exit_reason::user_shutdown);
    self->receive([](caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
  }
  http::finish_preload();
  // Everything is written and synced. The actor system is not destroyed: the stdin reader may
  // still block in read() (the session ended because the client's stdout went away), and with
  // nodes, they hold references to our store (it was sent to them), which CAF keeps alive until
  // their connections close; destroying the system would wait for either thread forever.
  std::fflush(nullptr);
  ::_exit(0);
}

}  // namespace

int run_mcp_server(const ServeOptions& options) { return serve(options, Front::mcp); }

int run_app_server(const ServeOptions& options) { return serve(options, Front::app); }

int run_acp(const ServeOptions& options) { return serve(options, Front::acp); }

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
