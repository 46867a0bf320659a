#include "actors/engine.hpp"

#include "actors/conversation.hpp"
#include "actors/mcp_client.hpp"
#include "actors/model_registry.hpp"
#include "actors/rollout_store.hpp"

#include <thread>

#include "protocol/base/secret_env.hpp"

namespace llmx {

void configure_system(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  const auto threads = env_count("LLMX_THREADS", std::max(2u, std::thread::hardware_concurrency()));
  cfg.set("scheduler.max-threads", static_cast<size_t>(threads));
  // An idle worker spins briefly, then sleeps on its condition variable until work arrives. CAF's
  // default adds 500 polls 50 µs apart in between: each one a nanosleep and two context switches,
  // a fifth of the server's CPU while it streams (issue 18, point 4).
  cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
}

void configure_network(caf::actor_system_config& cfg, const TlsFiles& tls) { network::configure(cfg, tls); }

namespace {
// The store, the MCP servers and the model registry live as long as the manager: they end once
// it has synced the store and gone.
Engine bind_lifetimes(Engine e) {
  e.manager->attach_functor([store = e.store, mcp = e.mcp, models = e.models](const caf::error&) {
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(mcp, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(models, caf::exit_reason::user_shutdown);
  });
  return e;
}
}  // namespace

Engine start_cluster_engine(caf::actor_system& sys, ClusterOptions options) {
  auto store = spawn_rollout_store(sys);
  auto mcp = spawn_mcp_hub(sys);
  auto models = spawn_model_registry(sys);  // model/list on the front; each node has its own
  auto manager = spawn_cluster_manager(sys, store, std::move(options));
  return bind_lifetimes(Engine{manager, store, mcp, models});
}

Engine start_engine(caf::actor_system& sys) {
  auto store = spawn_rollout_store(sys);
  auto mcp = spawn_mcp_hub(sys);
  auto models = spawn_model_registry(sys);
  auto manager = spawn_conversation_manager(sys, store, mcp, models);
  return bind_lifetimes(Engine{manager, store, mcp, models});
}

}  // namespace llmx
