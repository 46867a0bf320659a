#include "actors/engine.hpp"

#include "actors/conversation.hpp"

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

Engine start_engine(caf::actor_system& sys) { return Engine{spawn_conversation_manager(sys)}; }

}  // namespace llmx
