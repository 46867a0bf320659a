// What the network module (llmx-network.so) hands the llmx binary: caf_network.hpp's
// functions, by address. Built from the same compiler and CAF headers as the binary.
#pragma once

#include "actors/network/caf_network.hpp"

namespace llmx::network {

struct ModuleApi {
  decltype(&configure) configure_fn;
  decltype(&connector) connector_fn;
};

}  // namespace llmx::network

// The module's one exported symbol.
extern "C" const llmx::network::ModuleApi* llmx_network_module_api();
