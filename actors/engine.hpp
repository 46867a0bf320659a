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
#include "protocol/config/config.hpp"

namespace llmx {

struct Engine {
  conversation_manager_actor manager;
  rollout_store_actor store;  // stored threads: list, archive, unarchive (and rollout writes)
  mcp_hub_actor mcp;          // the clients of configured MCP servers (`llmx mcp list` asks it)
};

// For llmx's own binaries: registers the message types and sizes the scheduler to the machine
// (one worker per core; CAF's default of at least four made two cores switch constantly).
// LLMX_THREADS overrides the worker count.
void configure_system(caf::actor_system_config& cfg);

// Spawns the engine's long-lived actors in `sys`.
Engine start_engine(caf::actor_system& sys);

// Convenience: the Submission that sends one text message.
inline Submission text_submission(std::string text, std::string id = {}) {
  return Submission{std::move(id), UserInputOp{{TextInput{std::move(text)}}}};
}

}  // namespace llmx
