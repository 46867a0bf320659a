// llmx-bench's allocation counter, preloaded into a measured server (LD_PRELOAD): counts every
// malloc, calloc and realloc, and every 10 ms replaces the file LLMX_ALLOC_COUNT_FILE names with
// the count so far (written aside, then renamed: a reader never sees half of it).
// (A library of its own, outside tools/bench/*.cpp: llmx-bench must not count itself.)
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
}

namespace {

std::atomic<unsigned long> allocations{0};

void* report(void* path) {
  char aside[4096];
  snprintf(aside, sizeof aside, "%s.tmp", static_cast<const char*>(path));
  for (;;) {
    usleep(10000);
    FILE* f = fopen(aside, "w");
    if (!f) continue;
    fprintf(f, "%lu\n", allocations.load());
    fclose(f);
    rename(aside, static_cast<const char*>(path));
  }
  return nullptr;
}

__attribute__((constructor)) void start() {
  const char* path = getenv("LLMX_ALLOC_COUNT_FILE");
  if (!path || !*path) return;
  pthread_t t;
  if (pthread_create(&t, nullptr, report, const_cast<char*>(path)) == 0) pthread_detach(t);
}

}  // namespace

extern "C" {

void* malloc(size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}

void* calloc(size_t count, size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, n);
}

void* realloc(void* p, size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}

}
