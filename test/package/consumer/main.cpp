// Uses the installed llmx: starts the engine in this program's actor system, opens one
// conversation (no model request is made), then shuts the engine down.
#include <chrono>
#include <cstdio>

#include <caf/all.hpp>

#include "actors/engine.hpp"

int main() {
  caf::actor_system_config cfg;
  llmx::add_message_types(cfg);
  caf::actor_system sys{cfg};
  auto engine = llmx::start_engine(sys);
  bool conversation = false, shut_down = false;
  {
    caf::scoped_actor self{sys};
    self->request(engine.manager, std::chrono::seconds(10), llmx::new_conv_atom::value, llmx::load_config({}))
        .receive([&](llmx::conversation_actor, llmx::SessionConfiguredEvent sc) { conversation = !sc.session_id.empty(); },
                 [&](caf::error& err) { std::fprintf(stderr, "new conversation: %s\n", sys.render(err).c_str()); });
    self->request(engine.manager, std::chrono::seconds(10), llmx::shutdown_atom::value)
        .receive([&](bool) { shut_down = true; },
                 [&](caf::error& err) { std::fprintf(stderr, "shutdown: %s\n", sys.render(err).c_str()); });
  }
  const bool ok = conversation && shut_down;
  std::printf("llmx consumer: %s (llmx %s)\n", ok ? "OK" : "FAILED", LLMX_VERSION);
  return ok ? 0 : 1;
}
