#include "protocol/base/runtime_library.hpp"

#include <filesystem>

namespace llmx {

RuntimeLibrary::RuntimeLibrary(std::initializer_list<const char*> files, std::string_view name,
                               std::string_view package)
    : name_(name) {
  for (const char* file : files)
    if ((handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL))) return;
  throw std::runtime_error("cannot load " + name_ + " (" + std::string(package) + " package): " + dlerror());
}

void* llmx_module_entry(const char* file, const char* entry, std::string_view what, int mode) {
  std::error_code ec;
  const auto dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  std::string errors;
  // The build tree puts it beside the binary; an install, in <libdir>/llmx (LLMX_MODULE_REL).
  for (const auto& path : {dir / file, dir / LLMX_MODULE_REL / file}) {
    void* lib = dlopen(path.c_str(), mode | RTLD_LOCAL);
    if (!lib) {
      errors += std::string(errors.empty() ? "" : "; ") + dlerror();
      continue;
    }
    if (void* sym = dlsym(lib, entry)) return sym;
    errors += std::string(errors.empty() ? "" : "; ") + path.string() + " has no " + entry;
  }
  throw std::runtime_error("cannot load " + std::string(what) + ": " + errors);
}

}  // namespace llmx
