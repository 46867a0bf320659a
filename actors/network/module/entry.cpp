// The network module's entry point (see module_api.hpp).
#include "actors/network/module/module_api.hpp"

extern "C" __attribute__((visibility("default"))) const llmx::network::ModuleApi* llmx_network_module_api() {
  static const llmx::network::ModuleApi api{&llmx::network::configure, &llmx::network::connector};
  return &api;
}
