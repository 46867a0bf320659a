// Embedding llmx in another CAF program: register the message types on the host's config,
// start the engine in the host's actor system, then drive conversations with typed messages.
//
//   caf::actor_system_config cfg;
//   llmx::add_message_types(cfg);
//   caf::actor_system sys{cfg};
//   auto engine = llmx::start_engine(sys);
//   caf::scoped_actor self{sys};
//   self->request(engine.manager, caf::infinite, llmx::new_conv_atom::value, llmx::load_config({}))
//       .receive([&](llmx::conversation_actor conv, llmx::SessionConfiguredEvent sc) { ... },
//                [&](caf::error& err) { ... });
//   // subscribe an event_sink_actor, then submit Submission{"", UserInputOp{{TextInput{"hi"}}}}
#pragma once

#include "actors/actors.hpp"
#include "actors/network/caf_network.hpp"
#include "actors/node.hpp"
#include "protocol/config/config.hpp"

namespace llmx {

struct Engine {
  conversation_manager_actor manager;
  rollout_store_actor store;  // stored threads: list, archive, unarchive (and rollout writes)
  mcp_hub_actor mcp;          // the clients of configured MCP servers (`llmx mcp list` asks it)
  model_registry_actor models;  // what providers serve (model/list, `llmx models`)
};

// For llmx's own binaries: registers the message types and sizes the scheduler to the machine
// (one worker per core; CAF's default of at least four made two cores switch constantly).
// LLMX_THREADS overrides the worker count.
void configure_system(caf::actor_system_config& cfg);

// Spawns the engine's long-lived actors in `sys`.
Engine start_engine(caf::actor_system& sys);

// Certificates for TLS between fronts and nodes (CAF's OpenSSL module); PEM files.
using TlsFiles = network::Tls;

// For processes that talk to other nodes (fronts, `llmx node`, embedding hosts that connect to
// nodes): loads CAF's middleman (and its OpenSSL module with `tls`), and only lets llmx peers
// complete the handshake. Call after configure_system (or add_message_types), before the
// actor system is created. Link llmx::llmx_network (llmx::llmx_engine does).
void configure_network(caf::actor_system_config& cfg, const TlsFiles& tls);

// Like start_engine, but conversations are placed on the worker nodes at `options.nodes`
// (`llmx node`): the manager is a cluster manager, the store stays here and every node writes
// its rollouts to it. The system must have been configured with configure_network.
//
//   caf::actor_system_config cfg;
//   llmx::configure_system(cfg);
//   llmx::configure_network(cfg, {});
//   caf::actor_system sys{cfg};
//   auto engine = llmx::start_cluster_engine(sys, {{*llmx::parse_node_address("127.0.0.1:7000")}});
Engine start_cluster_engine(caf::actor_system& sys, ClusterOptions options);

// Convenience: the Submission that sends one text message.
inline Submission text_submission(std::string text, std::string id = {}) {
  return Submission{std::move(id), UserInputOp{{TextInput{std::move(text)}}}};
}

}  // namespace llmx
