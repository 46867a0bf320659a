#include "sandbox/process_spawn.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <cstring>

#include "sandbox/init_image.hpp"

namespace llmx::sandbox {
namespace {

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

constexpr size_t kChildStack = 64 * 1024;

enum class Step { none, setup, sandbox, chdir, exec };

// Shared with the vfork'ed child (CLONE_VM): the child writes the failure, the parent reads it
// after clone() returns, which CLONE_VFORK delays until the child has exec'd or exited. A child
// in a new user namespace has its own copy instead (see start()) and sends the failure through
// `error_fd`; string pointers stay valid because the copy has the same addresses.
struct ChildArgs {
  const char* path;
  char* const* argv;
  char* const* sh_argv;
  char* const* envp;
  const char* cwd;  // nullptr: inherit
  int in_fd, out_fd, err_fd;
  pid_t parent;
  int parent_pidfd;                // the server, for a child born in a new PID namespace
  const PreparedSandbox* sandbox;  // nullptr: unsandboxed
  int init_fd = -1;                // llmx-sandbox-init's image; -1: exec the command directly
  char* const* init_argv = nullptr;
  int report_fd = -1;              // init's report pipe (write end)
  int error_fd = -1;               // a child with its own memory reports failures here
  volatile Step failed_step = Step::none;
  const char* volatile failed_detail = nullptr;
  volatile int failed_errno = 0;
};

struct FailureRecord {
  Step step;
  int err;
  const char* detail;
};

[[noreturn]] void child_fail(ChildArgs* a, Step step, const char* detail, int err) {
  a->failed_detail = detail;
  a->failed_errno = err;
  a->failed_step = step;
  if (a->error_fd >= 0) {
    FailureRecord rec{step, err, detail};
    [[maybe_unused]] ssize_t n = ::write(a->error_fd, &rec, sizeof rec);
  }
  ::_exit(127);
}

// The server's own pidfd, opened once: readable once the server has exited.
int server_pidfd() {
  static const int fd = [] {
    return fd_above_stdio(int(::syscall(SYS_pidfd_open, ::getpid(), 0)));  // close-on-exec already
  }();
  return fd;
}

int child_main(void* arg) {
  auto* a = static_cast<ChildArgs*>(arg);
  // The parent's handlers must not run here (they would share its memory), and ignored signals
  // such as SIGPIPE must not leak into the command. All signals stay blocked until exec.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::sigaction(s, &dfl, nullptr);

  if (::setpgid(0, 0) != 0) child_fail(a, Step::setup, "setpgid", errno);
  // Die with the spawning thread (the loop); the check after it closes the race with the
  // server's death. In a new PID namespace getppid() is 0, so the server's pidfd tells instead.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    child_fail(a, Step::setup, "PR_SET_PDEATHSIG", errno);
  if (a->parent_pidfd >= 0) {
    pollfd p{a->parent_pidfd, POLLIN, 0};
    if (::poll(&p, 1, 0) != 0) child_fail(a, Step::setup, "parent exited", ESRCH);
  } else if (::getppid() != a->parent) {
    child_fail(a, Step::setup, "parent exited", ESRCH);
  }
  if (::dup2(a->in_fd, 0) < 0 || ::dup2(a->out_fd, 1) < 0 || ::dup2(a->err_fd, 2) < 0)
    child_fail(a, Step::setup, "dup2", errno);
  // Descriptors other code in the server opened without O_CLOEXEC must not reach the command.
  ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);

  const char* step = nullptr;
  // A non-dumpable server (§6.7) makes /proc/self/uid_map root's; this copy of its memory may be
  // dumpable for the moment until exec replaces it, so the child can write its own id maps.
  if (a->error_fd >= 0 && ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
    child_fail(a, Step::setup, "PR_SET_DUMPABLE", errno);
  if (a->sandbox)
    if (int e = a->sandbox->enter_namespaces(&step)) child_fail(a, Step::sandbox, step, e);
  // After the bind mounts, so a cwd inside .git resolves through the read-only mount.
  if (a->cwd && ::chdir(a->cwd) != 0) child_fail(a, Step::chdir, a->cwd, errno);
  // With an init, the command is executed by it; what the server can check it checks here, in
  // the command's own view of the file system, so "no such file" stays a spawn error.
  if (a->init_fd >= 0 && ::faccessat(AT_FDCWD, a->path, X_OK, AT_EACCESS) != 0)
    child_fail(a, Step::exec, nullptr, errno);
  if (a->sandbox)
    if (int e = a->sandbox->restrict_self(&step)) child_fail(a, Step::sandbox, step, e);

  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (a->init_fd >= 0) {
    ::fcntl(a->report_fd, F_SETFD, 0);  // init inherits the report pipe, and closes it for the command
    ::syscall(SYS_execveat, a->init_fd, "", a->init_argv, a->envp, AT_EMPTY_PATH);
    child_fail(a, Step::sandbox, "exec llmx-sandbox-init", errno);
  }
  ::execve(a->path, a->argv, a->envp);
  if (errno == ENOEXEC) ::execve("/bin/sh", a->sh_argv, a->envp);  // execvp's fallback
  child_fail(a, Step::exec, nullptr, errno);
}

// A close-on-exec pipe above the stdio numbers; `nonblocking` is the end we keep (read, write).
enum class Keep { read, write, none };
bool make_pipe(UniqueFd& read_end, UniqueFd& write_end, Keep nonblocking = Keep::read) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fd_above_stdio(fds[0]));
  write_end.reset(fd_above_stdio(fds[1]));
  if (!read_end || !write_end) return false;
  if (nonblocking == Keep::none) return true;
  return ::fcntl((nonblocking == Keep::read ? read_end : write_end).get(), F_SETFL, O_NONBLOCK) == 0;
}

bool is_executable_file(const std::string& path, bool* exists) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  *exists = true;
  return ::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) == 0;
}

}  // namespace

std::string resolve_program(const std::string& name, const std::map<std::string, std::string>& env,
                            const std::string& cwd, int* err) {
  if (name.empty()) {
    *err = ENOENT;
    return {};
  }
  if (name.find('/') != std::string::npos) return name;  // the child resolves it after chdir
  auto it = env.find("PATH");
  const std::string path = it != env.end() ? it->second : "/bin:/usr/bin";
  bool seen = false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) dir = ".";
    if (dir[0] != '/' && !cwd.empty()) dir = cwd + "/" + dir;
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate, &seen)) return candidate;
  }
  *err = seen ? EACCES : ENOENT;
  return {};
}

bool PreparedSpawn::prepare(const SpawnRequest& request, std::string* error) {
  argv0_ = request.argv.empty() ? std::string() : request.argv[0];
  auto fail = [&](const std::string& why) {
    if (error) *error = "failed to run `" + argv0_ + "`: " + why;
    return false;
  };
  if (request.argv.empty()) return fail("empty command");
  stdin_pipe_ = request.stdin_pipe;
  int err = 0;
  path_ = resolve_program(argv0_, request.env, request.cwd, &err);
  if (path_.empty()) return fail(std::strerror(err));
  cwd_ = request.cwd;
  args_ = request.argv;
  for (const auto& [k, v] : request.env) env_.push_back(k + "=" + v);
  for (auto& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  // `/bin/sh path args...` for scripts without a shebang (ENOEXEC), as execvp does.
  sh_argv_.push_back(const_cast<char*>("/bin/sh"));
  sh_argv_.push_back(path_.data());
  for (size_t i = 1; i < args_.size(); ++i) sh_argv_.push_back(args_[i].data());
  sh_argv_.push_back(nullptr);
  for (auto& e : env_) envp_.push_back(e.data());
  envp_.push_back(nullptr);

  if (request.sandbox && request.sandbox->mode != SandboxMode::danger_full_access) {
    const std::string& policy_cwd = request.sandbox_cwd.empty() ? request.cwd : request.sandbox_cwd;
    std::string why;
    if (!sandbox_.prepare(*request.sandbox, policy_cwd, request.sandbox_options, &why))
      return fail(why);
    use_sandbox_ = sandbox_.active();
  }
  return true;
}

bool PreparedSpawn::start(ChildProcess& out, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "failed to run `" + argv0_ + "`: " + why;
    return false;
  };
  UniqueFd out_r, out_w, err_r, err_w;
  if (!make_pipe(out_r, out_w) || !make_pipe(err_r, err_w))
    return fail(std::string("pipe: ") + std::strerror(errno));
  UniqueFd devnull(fd_above_stdio(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
  if (!devnull) return fail(std::string("/dev/null: ") + std::strerror(errno));
  UniqueFd in_r, in_w;  // the child reads, we write (non-blocking)
  if (stdin_pipe_ && !make_pipe(in_r, in_w, Keep::write)) return fail(std::string("pipe: ") + std::strerror(errno));

  ChildArgs args;
  args.path = path_.c_str();
  args.argv = argv_.data();
  args.sh_argv = sh_argv_.data();
  args.envp = envp_.data();
  args.cwd = cwd_.empty() ? nullptr : cwd_.c_str();
  args.in_fd = stdin_pipe_ ? in_r.get() : devnull.get();
  args.out_fd = out_w.get();
  args.err_fd = err_w.get();
  args.parent = ::getpid();
  args.sandbox = use_sandbox_ ? &sandbox_ : nullptr;
  const int ns_flags = use_sandbox_ ? sandbox_.clone_flags() : 0;
  // A new user namespace cannot share the server's memory: the child must become dumpable to
  // write its id maps, and dumpability belongs to the memory. It gets a copy (like fork) and the
  // parent waits on a pipe for its exec instead of on CLONE_VFORK.
  const bool share_memory = (ns_flags & CLONE_NEWUSER) == 0;
  UniqueFd error_r, error_w;
  if (!share_memory) {
    if (!make_pipe(error_r, error_w, Keep::none)) return fail(std::string("pipe: ") + std::strerror(errno));
    args.error_fd = error_w.get();
  }
  args.parent_pidfd = (ns_flags & CLONE_NEWPID) ? server_pidfd() : -1;
  UniqueFd report_r, report_w;
  std::string report_arg;
  std::vector<char*> init_argv;
  if (use_sandbox_ && sandbox_.use_init()) {
    if (!make_pipe(report_r, report_w)) return fail(std::string("pipe: ") + std::strerror(errno));
    report_arg = std::to_string(report_w.get());
    init_argv = {const_cast<char*>("llmx-sandbox-init"), report_arg.data(), path_.data()};
    for (char* a : argv_) init_argv.push_back(a);  // ends with argv_'s nullptr
    args.init_fd = init_image_fd();
    args.init_argv = init_argv.data();
    args.report_fd = report_w.get();
  }

  void* stack = ::mmap(nullptr, kChildStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return fail(std::string("mmap: ") + std::strerror(errno));
  // Blocked in the child too until exec: a handler running there would share our memory.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  int pidfd = -1;
  // CLONE_PIDFD hands out the pidfd atomically (no pid-reuse window). The exit signal is SIGCHLD:
  // execve() resets it to SIGCHLD anyway, so after exec these are ordinary children.
  pid_t pid = ::clone(child_main, static_cast<char*>(stack) + kChildStack,
                      (share_memory ? CLONE_VM | CLONE_VFORK : 0) | CLONE_PIDFD | SIGCHLD | ns_flags,
                      &args, &pidfd);
  int clone_errno = errno;
  if (!share_memory && pid > 0) {
    error_w.reset();  // EOF once the child has exec'd (its copy is close-on-exec) or died
    FailureRecord rec{};
    ssize_t n;
    while ((n = ::read(error_r.get(), &rec, sizeof rec)) < 0 && errno == EINTR) {
    }
    if (n == ssize_t(sizeof rec)) {
      args.failed_detail = rec.detail;
      args.failed_errno = rec.err;
      args.failed_step = rec.step;
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stack, kChildStack);
  if (pid < 0) return fail(std::string("clone: ") + std::strerror(clone_errno));

  UniqueFd pidfd_owner(fd_above_stdio(pidfd));
  if (args.failed_step != Step::none) {
    siginfo_t info{};
    ::syscall(SYS_waitid, P_PIDFD, pidfd_owner.get(), &info, WEXITED | __WALL, nullptr);
    const int e = args.failed_errno;
    const char* detail = args.failed_detail;
    switch (args.failed_step) {
      case Step::exec:
        return fail(std::strerror(e));
      case Step::chdir:
        return fail(std::string("cannot change directory to `") + detail +
                    "`: " + std::strerror(e));
      case Step::sandbox:
        return fail(std::string("sandbox setup failed (") + detail + "): " + std::strerror(e));
      default:
        return fail(std::string(detail ? detail : "setup") + ": " + std::strerror(e));
    }
  }
  out.pid = pid;
  out.pidfd = std::move(pidfd_owner);
  out.out = std::move(out_r);
  out.err = std::move(err_r);
  out.in = std::move(in_w);
  out.report = std::move(report_r);
  return true;
}

}  // namespace llmx::sandbox
