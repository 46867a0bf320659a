#include "leak_check.hpp"

#include <dirent.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LLMX_LEAK_CHECKED_AT_EXIT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LLMX_LEAK_CHECKED_AT_EXIT 1
#endif

namespace llmx::cli {

#ifdef LLMX_LEAK_CHECKED_AT_EXIT
namespace {

// Threads of this process the kernel lists (0 when /proc is not there).
int listed_threads() {
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

// Runs before the leak check (registered after it, so called before it). A thread that ends goes
// within microseconds; one that stays the same for 50 ms is blocked, not ending, and the wait
// stops there rather than hold up every exit.
void await_ending_threads() {
  using namespace std::chrono;
  auto last = listed_threads();
  auto since = steady_clock::now();
  while (last > 1 && steady_clock::now() - since < milliseconds(50)) {
    std::this_thread::sleep_for(milliseconds(1));
    const int now = listed_threads();
    if (now != last) {
      last = now;
      since = steady_clock::now();
    }
  }
}

}  // namespace

void settle_threads_before_leak_check() { std::atexit(await_ending_threads); }
#else
void settle_threads_before_leak_check() {}
#endif

}  // namespace llmx::cli
