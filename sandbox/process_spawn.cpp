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

#include <cstring>

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
// after clone() returns, which CLONE_VFORK delays until the child has exec'd or exited.
struct ChildArgs {
  const char* path;
  char* const* argv;
  char* const* sh_argv;
  char* const* envp;
  const char* cwd;  // nullptr: inherit
  int in_fd, out_fd, err_fd;
  pid_t parent;
  const PreparedSandbox* sandbox;  // nullptr: unsandboxed
  volatile Step failed_step = Step::none;
  const char* volatile failed_detail = nullptr;
  volatile int failed_errno = 0;
};

[[noreturn]] void child_fail(ChildArgs* a, Step step, const char* detail, int err) {
  a->failed_detail = detail;
  a->failed_errno = err;
  a->failed_step = step;
  ::_exit(127);
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
  // Die with the spawning thread (the loop); the getppid() check closes the race with its exit.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    child_fail(a, Step::setup, "PR_SET_PDEATHSIG", errno);
  if (::getppid() != a->parent) child_fail(a, Step::setup, "parent exited", ESRCH);
  if (::dup2(a->in_fd, 0) < 0 || ::dup2(a->out_fd, 1) < 0 || ::dup2(a->err_fd, 2) < 0)
    child_fail(a, Step::setup, "dup2", errno);
  // Descriptors other code in the server opened without O_CLOEXEC must not reach the command.
  ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);

  const char* step = nullptr;
  if (a->sandbox)
    if (int e = a->sandbox->enter_namespaces(&step)) child_fail(a, Step::sandbox, step, e);
  // After the bind mounts, so a cwd inside .git resolves through the read-only mount.
  if (a->cwd && ::chdir(a->cwd) != 0) child_fail(a, Step::chdir, a->cwd, errno);
  if (a->sandbox)
    if (int e = a->sandbox->restrict_self(&step)) child_fail(a, Step::sandbox, step, e);

  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(a->path, a->argv, a->envp);
  if (errno == ENOEXEC) ::execve("/bin/sh", a->sh_argv, a->envp);  // execvp's fallback
  child_fail(a, Step::exec, nullptr, errno);
}

bool make_pipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fd_above_stdio(fds[0]));
  write_end.reset(fd_above_stdio(fds[1]));
  if (!read_end || !write_end) return false;
  return ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK) == 0;
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

  ChildArgs args;
  args.path = path_.c_str();
  args.argv = argv_.data();
  args.sh_argv = sh_argv_.data();
  args.envp = envp_.data();
  args.cwd = cwd_.empty() ? nullptr : cwd_.c_str();
  args.in_fd = devnull.get();
  args.out_fd = out_w.get();
  args.err_fd = err_w.get();
  args.parent = ::getpid();
  args.sandbox = use_sandbox_ ? &sandbox_ : nullptr;

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
                      CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &args, &pidfd);
  int clone_errno = errno;
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
  return true;
}

}  // namespace llmx::sandbox
