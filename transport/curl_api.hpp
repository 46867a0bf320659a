// libcurl, loaded on first use with dlopen instead of linked: libcurl drags in some thirty
// shared libraries (TLS, Kerberos, LDAP, ...) whose relocation dominated process start-up, and
// most processes answer `initialize` long before they make their first HTTP request.
#pragma once

#include <curl/curl.h>

namespace llmx::http {

struct CurlApi {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_reset) easy_reset;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_pause) easy_pause;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...);
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_socket_action) multi_socket_action;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_strerror) multi_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// Loads libcurl (once, thread-safe) and runs curl_global_init; throws std::runtime_error
// naming the library when it cannot be loaded.
const CurlApi& curl_api();

// Starts loading libcurl on a background thread so the first request does not wait for it.
void preload_curl_async();

// Waits for a preload still in progress. Call before leaving main(): libcurl's TLS library
// registers exit handlers while it loads, and exiting mid-load runs them under its feet.
void finish_preload();

}  // namespace llmx::http
