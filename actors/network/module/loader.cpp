// caf_network.hpp's functions for the llmx binary: they load llmx-network.so (next to the
// binary, or where `cmake --install` put it) the first time a node is needed, and call into it.
#include "actors/network/module/module_api.hpp"
#include "protocol/base/runtime_library.hpp"

namespace llmx::network {

namespace {

const ModuleApi& load() {
  auto entry = reinterpret_cast<decltype(&llmx_network_module_api)>(llmx_module_entry(
      "llmx-network.so", "llmx_network_module_api", "llmx's network module, which nodes need", RTLD_NOW));
  return *entry();
}

const ModuleApi& module() {
  static const ModuleApi& api = load();  // stays loaded for the life of the process
  return api;
}

}  // namespace

void configure(caf::actor_system_config& cfg, const Tls& tls) { module().configure_fn(cfg, tls); }

caf::io::middleman_actor connector(caf::actor_system& sys, bool tls) { return module().connector_fn(sys, tls); }

}  // namespace llmx::network
