#include "node_command.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/model_registry.hpp"
#include "actors/mcp_client.hpp"
#include "termination.hpp"
#include "transport/curl_api.hpp"

namespace llmx::cli {

int run_node(const NodeOptions& options) {
  auto address = parse_node_address(options.listen);
  if (!address) {
    fmt::print(stderr, "error: --listen wants HOST:PORT (IPv6 in brackets), not `{}`\n", options.listen);
    return 2;
  }
  TlsFiles tls{options.cert, options.key, options.cafile};
  const bool some_tls = !options.cert.empty() || !options.key.empty() || !options.cafile.empty();
  if (some_tls && (options.cert.empty() || options.key.empty() || options.cafile.empty())) {
    fmt::print(stderr, "error: TLS needs all of --cert, --key and --cafile (the CA that signed the fronts' "
                       "certificates: peers are verified)\n");
    return 2;
  }
  // Conversations carry prompts, keys and commands: beyond this machine only over TLS.
  if (!is_loopback_host(address->host) && !tls.enabled()) {
    fmt::print(stderr,
               "error: refusing to listen on {} without TLS: a node reachable from other machines needs --cert, "
               "--key and --cafile (its peers are verified against that CA). Loopback addresses need none.\n",
               address->host);
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  TerminationSignals signals;  // before the actor system: its threads inherit the block
  caf::actor_system_config cfg;
  configure_system(cfg);
  configure_network(cfg, tls);  // throws when the network module cannot be loaded
  // After that: a libcurl still loading on its thread while main() returns would crash the exit.
  http::preload_curl_async();
  caf::actor_system sys{cfg};
  auto node = spawn_node(sys, spawn_mcp_hub(sys), spawn_model_registry(sys));
  // Published through the middleman's actor, with the interface the fronts check. SO_REUSEADDR:
  // a node restarted on its port must not wait out the old connections' TIME_WAIT.
  caf::expected<uint16_t> port = caf::sec::cannot_publish_invalid_actor;
  {
    caf::scoped_actor self{sys};
    self->request(network::connector(sys, tls.enabled()), std::chrono::seconds(30), caf::publish_atom::value,
                  address->port, caf::actor_cast<caf::strong_actor_ptr>(node), sys.message_types(node), address->host, true)
        .receive([&](uint16_t actual) { port = actual; }, [&](caf::error& err) { port = std::move(err); });
  }
  if (!port) {
    fmt::print(stderr, "error: cannot listen on {}: {}\n", address->text(), sys.render(port.error()));
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    return 1;
  }
  address->port = *port;
  fmt::print("listening {}\n", address->text());
  std::fflush(stdout);
  {
    caf::scoped_actor self{sys};
    auto me = caf::actor_cast<caf::actor>(self);
    signals.on_signal([me](int) { caf::anon_send(me, shutdown_atom::value); });
    if (options.exit_on_stdin_eof)
      std::thread([me] {
        char buf[256];
        while (::read(STDIN_FILENO, buf, sizeof buf) > 0) {
        }
        caf::anon_send(me, shutdown_atom::value);
      }).detach();
    self->receive([](shutdown_atom) {});
    signals.on_signal(nullptr);
  }
  // The fronts see the connection drop and end what ran here; their stores hold every rollout.
  std::fflush(nullptr);
  ::_exit(0);
}

}  // namespace llmx::cli
