// A shared library loaded at run time (dlopen) instead of linked, for what only some processes
// use: linking it would make every process pay its relocations at start-up (libcurl, libcrypto).
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

namespace llmx {

class RuntimeLibrary {
 public:
  // The first of `files` that loads; throws std::runtime_error naming `name` and `package`.
  // The library stays loaded for the life of the process.
  RuntimeLibrary(std::initializer_list<const char*> files, std::string_view name, std::string_view package);

  // `out` = the symbol `symbol`; throws std::runtime_error when the library lacks it.
  template <class F>
  void bind(F& out, const char* symbol) const {
    void* sym = dlsym(handle_, symbol);
    if (!sym) throw std::runtime_error(name_ + " lacks " + symbol);
    out = reinterpret_cast<F>(sym);
  }

 private:
  void* handle_ = nullptr;
  std::string name_;
};

// One of llmx's own modules (llmx-engine.so, llmx-network.so), opened with dlopen `mode`: beside
// the running binary in a build tree, in <libdir>/llmx once installed. Returns its symbol
// `entry`; throws std::runtime_error "cannot load <what>: ..." naming every path tried.
void* llmx_module_entry(const char* file, const char* entry, std::string_view what, int mode);

}  // namespace llmx
