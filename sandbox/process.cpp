#include "sandbox/process.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "sandbox/process_capture.hpp"
#include "sandbox/process_spawn.hpp"

namespace llmx::sandbox {
namespace {

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

using Clock = std::chrono::steady_clock;
constexpr uint64_t kWakeKey = ~uint64_t(0);
constexpr size_t kDeltaBytes = 8192;  // engine.md §6.2: live chunks of at most 8 KiB
constexpr size_t kReadBudget =
    1u << 20;  // per stream per wakeup, so one flood cannot starve others
constexpr size_t kDrainBudget = 4u << 20;  // final drain when a writer escaped the group kill
constexpr auto kGroupGrace = std::chrono::seconds(2);  // unkillable members (D state, other uid)

// Whether a process group still has members that are not zombies. Killed orphans are reparented
// to init, which may reap them only much later (this VM's PID 1 polls every ~1.5 s); they are
// dead already, so they must not hold up the result. Only called when kill(-pgid, 0) succeeds.
bool group_has_live_members(pid_t pgid) {
  DIR* proc = ::opendir("/proc");
  if (!proc) return true;
  bool alive = false;
  char path[300], stat[512];  // "/proc/" + a name of up to 255 bytes + "/stat"
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = ::read(fd, stat, sizeof stat - 1);
    ::close(fd);
    if (n <= 0) continue;
    stat[n] = 0;
    const char* rp = std::strrchr(stat, ')');  // the command name may contain anything
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (!rp || std::sscanf(rp + 1, " %c %d %d", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') {
      alive = true;
      break;
    }
  }
  ::closedir(proc);
  return alive;
}

// PIDFD_GET_INFO (Linux 6.13; exit status since 6.15), not in Debian 12's headers.
struct PidfdInfo {
  uint64_t mask, cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;  // wait status
};
static_assert(sizeof(PidfdInfo) == 64);
constexpr unsigned long kPidfdGetInfo = _IOWR(0xFF, 11, PidfdInfo);
constexpr uint64_t kPidfdInfoExit = 1u << 3;

bool exit_status_from_pidfd(int pidfd, int* status) {
  PidfdInfo info{};
  info.mask = kPidfdInfoExit;
  if (::ioctl(pidfd, kPidfdGetInfo, &info) != 0 || !(info.mask & kPidfdInfoExit)) return false;
  *status = info.exit_code;
  return true;
}

enum Kind : uint64_t { kPid = 0, kOut = 1, kErr = 2, kIn = 3 };
uint64_t key(uint64_t id, Kind k) {
  return (id << 2) | k;
}

struct Proc {
  Proc(uint64_t id, std::shared_ptr<ProcessHandler> h, const SpawnRequest& r, Clock::time_point t0)
      : id(id),
        handler(std::move(h)),
        out_cap(r.max_capture_bytes),
        err_cap(r.max_capture_bytes),
        agg_cap(r.max_capture_bytes),
        max_chunks(r.max_delta_chunks),
        start(t0) {
    // Beyond ~35 years the time_point would overflow; treat that as "no timeout".
    if (r.timeout_ms > 0 && r.timeout_ms < (int64_t(1) << 40))
      deadline = t0 + std::chrono::milliseconds(r.timeout_ms);
  }
  uint64_t id;
  std::shared_ptr<ProcessHandler> handler;
  ChildProcess child;
  HeadTailBuffer out_cap, err_cap, agg_cap;
  size_t max_chunks, out_chunks = 0, err_chunks = 0;
  Clock::time_point start, deadline = Clock::time_point::max();
  Clock::time_point next_group_check{}, give_up{};
  std::chrono::milliseconds group_backoff{1};
  bool sandboxed = false, timed_out = false, killed = false, exited = false;
  int exit_status = 0, term_signal = 0;
  std::unique_ptr<cgroup::Group> group;  // the command's cgroup (sandbox without namespaces)
  std::string in_buf;         // bytes for stdin the pipe has not taken yet
  bool in_watching = false;   // waiting for the pipe to take more (EPOLLOUT)
  bool in_close = false;      // close stdin once in_buf is written
  std::string program;     // argv[0], for a spawn error reported by the sandbox's init
  int exec_errno = 0;      // the init could not execute the command
};

// What llmx-sandbox-init reported before it ended: the command's wait status ('S') or the errno of
// its failed exec ('E'). Without a record (init killed), the init's own status stands.
void read_init_report(Proc& p) {
  char rec[5];
  ssize_t n;
  while ((n = ::read(p.child.report.get(), rec, sizeof rec)) < 0 && errno == EINTR) {
  }
  if (n != ssize_t(sizeof rec)) return;
  int value;
  std::memcpy(&value, rec + 1, sizeof value);
  if (rec[0] == 'E') {
    p.exec_errno = value;
  } else if (rec[0] == 'S') {
    p.exit_status = WIFEXITED(value) ? WEXITSTATUS(value) : 0;
    p.term_signal = WIFSIGNALED(value) ? WTERMSIG(value) : 0;
  }
}

struct Pending {
  uint64_t id;
  std::shared_ptr<ProcessHandler> handler;
  SpawnRequest request;
  std::unique_ptr<PreparedSpawn> prepared;  // null when preparation failed
  std::string error;
  Clock::time_point start;
};

void safe_call(auto&& fn) {
  try {
    fn();
  } catch (...) {
    // A throwing handler must not take down the loop that serves every other child.
  }
}

}  // namespace

struct ProcessLoop::Impl {
  std::mutex mu;
  std::vector<Pending> pending;  // guarded by mu
  std::vector<uint64_t> kills;   // guarded by mu
  std::vector<std::pair<uint64_t, std::string>> writes;  // guarded by mu
  std::vector<uint64_t> stdin_closes;                    // guarded by mu
  bool stopping = false;         // guarded by mu
  std::atomic<uint64_t> next_id{1};
  std::atomic<size_t> in_flight{0};
  UniqueFd epoll, wake;
  std::thread thread;
  // Loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Proc>> procs;
  bool shutting_down = false;
  char buf[64 * 1024];

  void notify() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake.get(), &one, sizeof one);
  }

  void run() {
    // Writing to a child that stopped reading must give EPIPE, not kill the server.
    sigset_t pipe;
    ::sigemptyset(&pipe);
    ::sigaddset(&pipe, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    epoll_event events[64];
    for (;;) {
      int n = ::epoll_wait(epoll.get(), events, 64, timeout_ms());
      for (int i = 0; i < n; ++i) {
        const uint64_t k = events[i].data.u64;
        if (k == kWakeKey) {
          uint64_t v;
          [[maybe_unused]] ssize_t r = ::read(wake.get(), &v, sizeof v);
          continue;
        }
        auto it = procs.find(k >> 2);
        if (it == procs.end()) continue;  // finished earlier in this batch
        Proc& p = *it->second;
        if ((k & 3) == kPid)
          on_child_exit(p);
        else if ((k & 3) == kIn)
          flush_stdin(p);
        else
          read_stream(p, (k & 3) == kOut ? Stream::out : Stream::err, kReadBudget);
      }
      take_commands();
      on_timers();
      if (shutting_down && procs.empty()) {
        std::lock_guard lock(mu);
        if (pending.empty()) return;
      }
    }
  }

  int timeout_ms() const {
    auto next = Clock::time_point::max();
    for (const auto& [id, p] : procs)
      next = std::min(next, p->exited ? p->next_group_check : (p->timed_out ? next : p->deadline));
    if (next == Clock::time_point::max()) return -1;
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(next - Clock::now()).count();
    return left <= 0 ? 0 : int(std::min<int64_t>((left + 999) / 1000, 3600 * 1000));
  }

  void take_commands() {
    std::vector<Pending> starts;
    std::vector<uint64_t> to_kill, to_close;
    std::vector<std::pair<uint64_t, std::string>> to_write;
    {
      std::lock_guard lock(mu);
      starts.swap(pending);
      to_kill.swap(kills);
      to_write.swap(writes);
      to_close.swap(stdin_closes);
      if (stopping) shutting_down = true;
    }
    for (auto& s : starts) start(std::move(s));
    for (auto& [id, bytes] : to_write)
      if (auto it = procs.find(id); it != procs.end() && it->second->child.in) {
        it->second->in_buf += bytes;
        flush_stdin(*it->second);
      }
    for (uint64_t id : to_close)
      if (auto it = procs.find(id); it != procs.end()) {
        it->second->in_close = true;
        flush_stdin(*it->second);
      }
    for (uint64_t id : to_kill) kill_proc(id);
    if (shutting_down)
      for (auto& [id, p] : procs) kill_proc(id);
  }

  void start(Pending&& s) {
    auto proc = std::make_unique<Proc>(s.id, s.handler, s.request, s.start);
    std::string error = std::move(s.error);
    const bool refused = error.empty() && shutting_down;
    if (refused)
      error = "failed to run `" + s.request.argv[0] + "`: the process loop is shutting down";
    if (error.empty() && s.prepared->start(proc->child, &error)) {
      proc->sandboxed = s.prepared->sandboxed();
      proc->program = s.request.argv[0];
      proc->group = s.prepared->take_cgroup();
      add(proc->child.pidfd.get(), key(s.id, kPid));
      add(proc->child.out.get(), key(s.id, kOut));
      add(proc->child.err.get(), key(s.id, kErr));
      procs.emplace(s.id, std::move(proc));
      return;
    }
    ExecResult r;
    r.spawn_error = std::move(error);
    r.killed = refused;
    r.duration = Clock::now() - s.start;
    --in_flight;
    safe_call([&] { s.handler->on_exit(std::move(r)); });
  }

  void add(int fd, uint64_t k) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = k;
    ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &ev);
  }

  // Writes what the pipe takes now; waits for EPOLLOUT for the rest. A child that closed its stdin
  // gets nothing more.
  void flush_stdin(Proc& p) {
    UniqueFd& fd = p.child.in;
    while (fd && !p.in_buf.empty()) {
      ssize_t n = ::write(fd.get(), p.in_buf.data(), p.in_buf.size());
      if (n > 0) {
        p.in_buf.erase(0, size_t(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        if (!p.in_watching) {
          epoll_event ev{};
          ev.events = EPOLLOUT;
          ev.data.u64 = key(p.id, kIn);
          ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd.get(), &ev);
          p.in_watching = true;
        }
        return;
      } else {
        p.in_buf.clear();  // EPIPE: the child stopped reading
        p.in_watching = false;
        close_fd(fd);
        return;
      }
    }
    if (!fd) return;
    if (p.in_watching) {
      ::epoll_ctl(epoll.get(), EPOLL_CTL_DEL, fd.get(), nullptr);
      p.in_watching = false;
    }
    if (p.in_close) fd.reset();
  }

  void close_fd(UniqueFd& fd) {
    if (!fd) return;
    ::epoll_ctl(epoll.get(), EPOLL_CTL_DEL, fd.get(), nullptr);
    fd.reset();
  }

  // The command's process group, and its cgroup when it has one (members that left the group).
  static void kill_all(Proc& p) {
    ::kill(-p.child.pid, SIGKILL);
    if (p.group) p.group->kill();
  }

  void kill_proc(uint64_t id) {
    auto it = procs.find(id);
    if (it == procs.end() || it->second->exited || it->second->killed) return;
    it->second->killed = true;
    kill_all(*it->second);
  }

  // Reads what is available now, up to `budget` bytes; closes the stream on EOF.
  void read_stream(Proc& p, Stream s, size_t budget) {
    UniqueFd& fd = s == Stream::out ? p.child.out : p.child.err;
    while (fd && budget > 0) {
      ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, budget));
      if (n > 0) {
        deliver(p, s, std::string_view(buf, size_t(n)));
        budget -= size_t(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        return;
      } else {
        close_fd(fd);  // EOF or error
      }
    }
  }

  void deliver(Proc& p, Stream s, std::string_view bytes) {
    (s == Stream::out ? p.out_cap : p.err_cap).append(bytes);
    p.agg_cap.append(bytes);
    size_t& chunks = s == Stream::out ? p.out_chunks : p.err_chunks;
    while (!bytes.empty() && chunks < p.max_chunks) {
      std::string_view piece = bytes.substr(0, kDeltaBytes);
      bytes.remove_prefix(piece.size());
      ++chunks;
      safe_call([&] { p.handler->on_output(s, piece); });
    }
  }

  void on_child_exit(Proc& p) {
    siginfo_t info{};
    // WNOWAIT first: while the child is an unreaped zombie its pid (= the group id) cannot be
    // reused, so killing the group cannot hit a stranger.
    if (::syscall(SYS_waitid, P_PIDFD, p.child.pidfd.get(), &info,
                  WEXITED | WNOHANG | WNOWAIT | __WALL, nullptr) == 0) {
      if (info.si_pid == 0) return;   // not exited yet
      kill_all(p);  // leftovers must not outlive the command
      ::syscall(SYS_waitid, P_PIDFD, p.child.pidfd.get(), &info, WEXITED | WNOHANG | __WALL,
                nullptr);
      if (info.si_code == CLD_EXITED)
        p.exit_status = info.si_status;
      else
        p.term_signal = info.si_status;
    } else {
      // Reaped behind our back: the server ignores SIGCHLD (auto-reap) or some other code called
      // waitpid(-1). The pidfd still knows the status on Linux >= 6.15.
      kill_all(p);
      int status = 0;
      if (!exit_status_from_pidfd(p.child.pidfd.get(), &status))
        p.exit_status = -1;
      else if (WIFEXITED(status))
        p.exit_status = WEXITSTATUS(status);
      else if (WIFSIGNALED(status))
        p.term_signal = WTERMSIG(status);
    }
    if (p.child.report) read_init_report(p);
    p.exited = true;
    close_fd(p.child.pidfd);
    const auto now = Clock::now();
    p.give_up = now + kGroupGrace;
    p.next_group_check = now;
    check_group(p, now);
  }

  // After the direct child: wait (without blocking the loop) until the group is empty.
  void check_group(Proc& p, Clock::time_point now) {
    const pid_t pgid = p.child.pid;
    // Members reparented to us (when the server is PID 1 or a subreaper) would stay zombies.
    int st;
    while (::waitpid(-pgid, &st, WNOHANG | __WALL) > 0) {
    }
    if (p.group) p.group->kill();  // members that forked since the last kill
    const bool gone =
        ((::kill(-pgid, SIGKILL) != 0 && errno == ESRCH) || !group_has_live_members(pgid)) &&
        !(p.group && p.group->populated());
    if (!gone && now < p.give_up) {
      p.next_group_check = now + p.group_backoff;
      p.group_backoff = std::min(p.group_backoff * 2, std::chrono::milliseconds(64));
      return;
    }
    finish(p);
  }

  void on_timers() {
    const auto now = Clock::now();
    std::vector<uint64_t> due;
    for (auto& [id, p] : procs)
      if ((p->exited && now >= p->next_group_check) || (!p->exited && now >= p->deadline))
        due.push_back(id);
    for (uint64_t id : due) {
      auto it = procs.find(id);
      if (it == procs.end()) continue;
      Proc& p = *it->second;
      if (p.exited) {
        check_group(p, now);
      } else if (!p.timed_out) {
        p.timed_out = true;
        kill_all(p);
      }
    }
  }

  void finish(Proc& p) {
    // Writers still holding the pipes escaped the group; take what is buffered and stop.
    read_stream(p, Stream::out, kDrainBudget);
    read_stream(p, Stream::err, kDrainBudget);
    close_fd(p.child.out);
    close_fd(p.child.err);
    ExecResult r;
    if (p.exec_errno != 0 && !p.timed_out && !p.killed) {
      r.spawn_error = "failed to run `" + p.program + "`: " + std::strerror(p.exec_errno);
    } else if (p.timed_out) {
      r.exit_code = 124;
      r.timed_out = true;
    } else if (p.term_signal) {
      r.signal = p.term_signal;
      r.exit_code = 128 + p.term_signal;
    } else {
      r.exit_code = p.exit_status;
    }
    r.killed = p.killed && !p.timed_out;
    r.sandboxed = p.sandboxed;
    r.stdout_text = p.out_cap.str();
    r.stderr_text = p.err_cap.str();
    r.aggregated = p.agg_cap.str();
    r.stdout_total = p.out_cap.total();
    r.stderr_total = p.err_cap.total();
    r.duration = Clock::now() - p.start;
    auto handler = std::move(p.handler);
    procs.erase(p.id);  // p is gone from here on
    --in_flight;
    safe_call([&] { handler->on_exit(std::move(r)); });
  }
};

ProcessLoop::ProcessLoop() : impl_(std::make_unique<Impl>()) {
  impl_->epoll.reset(::epoll_create1(EPOLL_CLOEXEC));
  impl_->wake.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl_->epoll || !impl_->wake)
    throw std::runtime_error(std::string("process loop: ") + std::strerror(errno));
  impl_->add(impl_->wake.get(), kWakeKey);
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

ProcessLoop::~ProcessLoop() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->notify();
  impl_->thread.join();
}

uint64_t ProcessLoop::spawn(SpawnRequest request, std::shared_ptr<ProcessHandler> handler) {
  Pending p;
  p.start = Clock::now();
  p.id = impl_->next_id++;
  p.handler = std::move(handler);
  p.prepared = std::make_unique<PreparedSpawn>();
  if (!p.prepared->prepare(request, &p.error)) p.prepared.reset();
  p.request = std::move(request);
  const uint64_t id = p.id;
  ++impl_->in_flight;
  {
    std::lock_guard lock(impl_->mu);
    impl_->pending.push_back(std::move(p));
  }
  impl_->notify();
  return id;
}

void ProcessLoop::kill(uint64_t id) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->kills.push_back(id);
  }
  impl_->notify();
}

void ProcessLoop::write(uint64_t id, std::string bytes) {
  if (bytes.empty()) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->writes.emplace_back(id, std::move(bytes));
  }
  impl_->notify();
}

void ProcessLoop::close_stdin(uint64_t id) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stdin_closes.push_back(id);
  }
  impl_->notify();
}

size_t ProcessLoop::running() const {
  return impl_->in_flight.load();
}

ProcessLoop& shared_process_loop() {
  static auto* loop = new ProcessLoop;
  return *loop;
}

}  // namespace llmx::sandbox
