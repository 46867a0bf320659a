#include "test/support/case_watchdog.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

namespace llmx::test {
namespace {

using Clock = std::chrono::steady_clock;

std::mutex mutex;
std::string current;
std::optional<Clock::time_point> since;

int limit_seconds() {
  const char* v = std::getenv("LLMX_TEST_CASE_TIMEOUT");
  const int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 300;
}

std::string read_proc_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
std::optional<std::pair<char, pid_t>> state_and_parent(pid_t pid) {
  const std::string stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return std::nullopt;
  std::istringstream rest(stat.substr(close + 2));
  char state = '?';
  pid_t parent = 0;
  rest >> state >> parent;
  return std::make_pair(state, parent);
}

std::vector<pid_t> descendants(pid_t root) {
  std::vector<std::pair<pid_t, pid_t>> all;  // pid, parent
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (auto sp = state_and_parent(pid)) all.emplace_back(pid, sp->second);
  }
  std::vector<pid_t> out{root};
  for (size_t i = 0; i < out.size(); ++i)
    for (const auto& [pid, parent] : all)
      if (parent == out[i]) out.push_back(pid);
  out.erase(out.begin());
  return out;
}

std::string command_line(pid_t pid) {
  std::string cmd = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  if (cmd.size() > 160) cmd = cmd.substr(0, 160) + "...";
  return cmd;
}

void show_stacks(pid_t pid) {
  if (::access("/usr/bin/gdb", X_OK) != 0) return;
  const std::string cmd = "timeout 30 /usr/bin/gdb -p " + std::to_string(pid) +
                          " -batch -nx -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(Thread|#)' | head -120 >&2";
  std::fprintf(stderr, "--- stacks of %d\n", pid);
  std::fflush(stderr);
  (void)std::system(cmd.c_str());
}

[[noreturn]] void give_up(const std::string& name, long seconds) {
  const pid_t self = ::getpid();
  const auto children = descendants(self);
  show_stacks(self);
  for (pid_t pid : children)
    if (command_line(pid).find("llmx") != std::string::npos) show_stacks(pid);
  std::fprintf(stderr, "--- processes the test case left running:\n");
  for (pid_t pid : children) {
    const auto sp = state_and_parent(pid);
    std::string wchan = read_proc_file("/proc/" + std::to_string(pid) + "/wchan");
    std::fprintf(stderr, "  %d (parent %d, state %c, in %s): %s\n", pid, sp ? sp->second : 0, sp ? sp->first : '?',
                 wchan.empty() ? "-" : wchan.c_str(), command_line(pid).c_str());
  }
  for (pid_t pid : children) ::kill(pid, SIGKILL);
  std::fprintf(stderr, "watchdog: test case \"%s\" still running after %ld s (LLMX_TEST_CASE_TIMEOUT): run ended\n",
               name.c_str(), seconds);
  std::fflush(stderr);
  std::_Exit(3);
}

}  // namespace

void start_case_watchdog() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::thread([] {
      const auto limit = std::chrono::seconds(limit_seconds());
      while (true) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        std::string name;
        long ran = 0;
        {
          std::lock_guard lock(mutex);
          if (!since || Clock::now() - *since < limit) continue;
          name = current;
          ran = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - *since).count();
        }
        give_up(name, ran);
      }
    }).detach();
  });
}

void case_watchdog_started(const std::string& name) {
  std::lock_guard lock(mutex);
  current = name;
  since = Clock::now();
}

void case_watchdog_ended() {
  std::lock_guard lock(mutex);
  since.reset();
}

}  // namespace llmx::test
