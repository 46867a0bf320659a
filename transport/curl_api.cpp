#include "transport/curl_api.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <mutex>
#include <thread>

namespace llmx::http {

namespace {

template <class F>
void bind(void* lib, F& out, const char* name) {
  void* sym = dlsym(lib, name);
  if (!sym) throw std::runtime_error(std::string("libcurl lacks ") + name);
  out = reinterpret_cast<F>(sym);
}

CurlApi load() {
  void* lib = nullptr;
  for (const char* name : {"libcurl.so.4", "libcurl.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
  }
  if (!lib) throw std::runtime_error(std::string("cannot load libcurl (libcurl4 package): ") + dlerror());
  CurlApi api{};
  bind(lib, api.global_init, "curl_global_init");
  bind(lib, api.easy_init, "curl_easy_init");
  bind(lib, api.easy_cleanup, "curl_easy_cleanup");
  bind(lib, api.easy_reset, "curl_easy_reset");
  bind(lib, api.easy_setopt, "curl_easy_setopt");
  bind(lib, api.easy_getinfo, "curl_easy_getinfo");
  bind(lib, api.easy_strerror, "curl_easy_strerror");
  bind(lib, api.easy_pause, "curl_easy_pause");
  bind(lib, api.multi_init, "curl_multi_init");
  bind(lib, api.multi_cleanup, "curl_multi_cleanup");
  bind(lib, api.multi_setopt, "curl_multi_setopt");
  bind(lib, api.multi_add_handle, "curl_multi_add_handle");
  bind(lib, api.multi_remove_handle, "curl_multi_remove_handle");
  bind(lib, api.multi_perform, "curl_multi_perform");
  bind(lib, api.multi_poll, "curl_multi_poll");
  bind(lib, api.multi_wakeup, "curl_multi_wakeup");
  bind(lib, api.multi_info_read, "curl_multi_info_read");
  bind(lib, api.multi_strerror, "curl_multi_strerror");
  bind(lib, api.slist_append, "curl_slist_append");
  bind(lib, api.slist_free_all, "curl_slist_free_all");
  if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("curl_global_init failed");
  return api;
}

}  // namespace

const CurlApi& curl_api() {
  static const CurlApi api = load();  // the library stays loaded for the life of the process
  return api;
}

namespace {
struct Preloader {
  std::thread thread;
  std::once_flag once;
  std::mutex join_mutex;
  void join() {
    std::lock_guard lk(join_mutex);
    if (thread.joinable()) thread.join();
  }
  ~Preloader() { join(); }
};
Preloader& preloader() {
  static Preloader p;
  return p;
}
}  // namespace

void preload_curl_async() {
  auto& p = preloader();
  std::call_once(p.once, [&p] {
    p.thread = std::thread([] {
      try {
        curl_api();
      } catch (...) {
        // Reported again, with the reason, by the first request that needs curl.
      }
    });
  });
}

void finish_preload() { preloader().join(); }

}  // namespace llmx::http
