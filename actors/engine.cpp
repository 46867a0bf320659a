#include "actors/engine.hpp"

#include "actors/conversation.hpp"
#include "actors/rollout_store.hpp"

#include <cstdlib>
#include <thread>

namespace llmx {

void configure_system(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  size_t threads = std::max(2u, std::thread::hardware_concurrency());
  if (const char* v = std::getenv("LLMX_THREADS"); v && std::atoi(v) > 0) threads = static_cast<size_t>(std::atoi(v));
  cfg.set("scheduler.max-threads", threads);
}

Engine start_engine(caf::actor_system& sys) {
  auto store = spawn_rollout_store(sys);
  auto manager = spawn_conversation_manager(sys, store);
  // The store lives as long as the manager: it quits once the manager has synced it and gone.
  manager->attach_functor([store](const caf::error&) { caf::anon_send_exit(store, caf::exit_reason::user_shutdown); });
  return Engine{manager, store};
}

}  // namespace llmx
