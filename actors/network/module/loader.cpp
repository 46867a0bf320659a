// caf_network.hpp's functions for the llmx binary: they load llmx-network.so (next to the
// binary, or where `cmake --install` put it) the first time a node is needed, and call into it.
#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "actors/network/module/module_api.hpp"

namespace llmx::network {

namespace {

const char* const kModule = "llmx-network.so";

std::filesystem::path own_directory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe.parent_path();
}

const ModuleApi& load() {
  auto dir = own_directory();
  std::string errors;
  // The build tree puts it beside the binary; an install, in <libdir>/llmx (LLMX_MODULE_REL).
  for (const auto& path : {dir / kModule, dir / LLMX_MODULE_REL / kModule}) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      errors += std::string(errors.empty() ? "" : "; ") + dlerror();
      continue;
    }
    auto entry = reinterpret_cast<decltype(&llmx_network_module_api)>(dlsym(lib, "llmx_network_module_api"));
    if (!entry) throw std::runtime_error(path.string() + " is not llmx's network module");
    return *entry();
  }
  throw std::runtime_error("cannot load llmx's network module, which nodes need: " + errors);
}

const ModuleApi& module() {
  static const ModuleApi& api = load();  // stays loaded for the life of the process
  return api;
}

}  // namespace

void configure(caf::actor_system_config& cfg, const Tls& tls) { module().configure_fn(cfg, tls); }

caf::io::middleman_actor connector(caf::actor_system& sys, bool tls) { return module().connector_fn(sys, tls); }

}  // namespace llmx::network
