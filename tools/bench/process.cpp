#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace llmx::bench {

Child::Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  // posix_spawn, as Python's subprocess and most hosts start a server: a forked copy of this
  // multi-threaded bench could not safely call setenv before exec, and on this VM a forked
  // child also starts measurably slower, which the startup row would count as ours.
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    if (!env.contains(std::string(kv.substr(0, kv.find('='))))) vars.emplace_back(kv);
  }
  for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);  // dup2 clears close-on-exec on 0 and 1
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  in_ = in[1];
  out_ = out[0];
  if (rc != 0) {  // as a child that could not exec: no output, exit code 127
    pid_ = -1;
    status_ = 127;
    std::fprintf(stderr, "llmx-bench: cannot start %s: %s\n", args[0], std::strerror(rc));
  }
}

Child::~Child() {
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void Child::write_raw(const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(in_, data.data() + off, data.size() - off);
    if (n <= 0) throw std::runtime_error("write to child failed");
    off += static_cast<size_t>(n);
  }
}

void Child::write_line(const std::string& line) { write_raw(line + "\n"); }

std::optional<std::string> Child::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    // Lines are cut by an offset, the buffer compacted once per read: erasing each line from
    // the front moved the rest of a 64 KiB read per line, and made the bench the slow reader.
    auto nl = buf_.find('\n', taken_);
    if (nl != std::string::npos) {
      std::string line = buf_.substr(taken_, nl - taken_);
      taken_ = nl + 1;
      return line;
    }
    buf_.erase(0, taken_);
    taken_ = 0;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char tmp[65536];
    ssize_t n = ::read(out_, tmp, sizeof tmp);
    if (n <= 0) return std::nullopt;
    buf_.append(tmp, static_cast<size_t>(n));
  }
}

void Child::close_stdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

int Child::wait(std::chrono::milliseconds timeout) {
  if (pid_ < 0) return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return status_;
    }
    usleep(2000);
  }
  return -1;
}

double Child::cpu_seconds() const {
  // The process's CPU clock counts nanoseconds (all threads, exited ones too); /proc's counters
  // are clock ticks, 10 ms, too coarse for a cost per delta.
  clockid_t clock;
  timespec ts{};
  if (clock_getcpuclockid(pid_, &clock) == 0 && clock_gettime(clock, &ts) == 0)
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  std::ifstream f("/proc/" + std::to_string(pid_) + "/stat");
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close_paren = content.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream rest(content.substr(close_paren + 2));
  std::string field;
  unsigned long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoul(field);
    if (i == 15) stime = std::stoul(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long Child::peak_rss_kib() const {
  std::ifstream f("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

std::optional<std::string> start_mock_llm(std::optional<Child>& slot, const std::string& binary, int nice) {
  std::vector<std::string> argv{binary, "--max-threads", "2048"};
  if (nice > 0) argv.insert(argv.begin(), {"/usr/bin/nice", "-n", std::to_string(nice)});
  slot.emplace(argv, std::map<std::string, std::string>{});
  return slot->read_line(std::chrono::seconds(10));
}

long Child::context_switches() const {
  long sum = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
    std::ifstream f(task.path() / "status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
        sum += std::stol(line.substr(line.find(':') + 1));
  }
  return sum;
}

}  // namespace llmx::bench
