#include "transport/curl_api.hpp"

#include "protocol/base/runtime_library.hpp"

#include <stdexcept>
#include <string>
#include <mutex>
#include <thread>

namespace llmx::http {

namespace {

CurlApi load() {
  const RuntimeLibrary lib({"libcurl.so.4", "libcurl.so"}, "libcurl", "libcurl4");
  CurlApi api{};
  lib.bind(api.global_init, "curl_global_init");
  lib.bind(api.easy_init, "curl_easy_init");
  lib.bind(api.easy_cleanup, "curl_easy_cleanup");
  lib.bind(api.easy_reset, "curl_easy_reset");
  lib.bind(api.easy_setopt, "curl_easy_setopt");
  lib.bind(api.easy_getinfo, "curl_easy_getinfo");
  lib.bind(api.easy_strerror, "curl_easy_strerror");
  lib.bind(api.easy_pause, "curl_easy_pause");
  lib.bind(api.multi_init, "curl_multi_init");
  lib.bind(api.multi_cleanup, "curl_multi_cleanup");
  lib.bind(api.multi_setopt, "curl_multi_setopt");
  lib.bind(api.multi_add_handle, "curl_multi_add_handle");
  lib.bind(api.multi_remove_handle, "curl_multi_remove_handle");
  lib.bind(api.multi_socket_action, "curl_multi_socket_action");
  lib.bind(api.multi_info_read, "curl_multi_info_read");
  lib.bind(api.multi_strerror, "curl_multi_strerror");
  lib.bind(api.slist_append, "curl_slist_append");
  lib.bind(api.slist_free_all, "curl_slist_free_all");
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
