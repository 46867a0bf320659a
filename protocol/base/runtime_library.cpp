#include "protocol/base/runtime_library.hpp"

namespace llmx {

RuntimeLibrary::RuntimeLibrary(std::initializer_list<const char*> files, std::string_view name,
                               std::string_view package)
    : name_(name) {
  for (const char* file : files)
    if ((handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL))) return;
  throw std::runtime_error("cannot load " + name_ + " (" + std::string(package) + " package): " + dlerror());
}

}  // namespace llmx
