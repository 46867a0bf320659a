// llmx-sandbox-init: PID 1 of a sandboxed command's PID namespace (compiled static and carried
// inside the engine, see sandbox/init_image.hpp). The spawner has already entered the
// namespaces, built the mounts, dropped every capability and applied Landlock and seccomp; this
// program only starts the command as PID 2, reaps whatever is orphaned, forwards termination
// signals, and ends when the command ends, which makes the kernel kill everything left in the
// namespace (daemons included).
//
//   llmx-sandbox-init REPORT_FD PATH ARGV0 ARGS...
//
// REPORT_FD receives one record before init exits: 'S' + the command's wait status (4 bytes), or
// 'E' + errno (4 bytes) when the command could not be executed. Init never runs user code.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

void report(int fd, char kind, int value) {
  char rec[5];
  rec[0] = kind;
  memcpy(rec + 1, &value, sizeof value);
  while (write(fd, rec, sizeof rec) < 0 && errno == EINTR) {
  }
}

// Signals a client or the command itself may send to "the sandbox" that mean "stop": they go to
// the command, because PID 1 ignores every signal it has no handler for.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

// Our exit ends the namespace: the kernel SIGKILLs every remaining process in it.
[[noreturn]] void finish(int report_fd, int status) {
  report(report_fd, 'S', status);
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

[[noreturn]] void exec_command(int report_fd, char* path, char** argv, const sigset_t& original) {
  sigprocmask(SIG_SETMASK, &original, nullptr);
  execve(path, argv, environ);
  int err = errno;
  if (err == ENOEXEC) {  // a script without a shebang: what execvp does
    int n = 0;
    while (argv[n]) ++n;
    char** sh_argv = static_cast<char**>(calloc(size_t(n) + 2, sizeof(char*)));
    if (sh_argv) {
      sh_argv[0] = const_cast<char*>("/bin/sh");
      sh_argv[1] = path;
      for (int i = 1; i < n; ++i) sh_argv[i + 1] = argv[i];
      execve("/bin/sh", sh_argv, environ);
      err = errno;
    }
  }
  report(report_fd, 'E', err);
  _exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 125;
  const int report_fd = atoi(argv[1]);
  fcntl(report_fd, F_SETFD, FD_CLOEXEC);  // the command must not inherit it

  sigset_t all, original;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &original);
  sigset_t watched;
  sigemptyset(&watched);
  sigaddset(&watched, SIGCHLD);
  for (int s : kForwarded) sigaddset(&watched, s);
  const int sfd = signalfd(-1, &watched, SFD_CLOEXEC);

  const pid_t command = fork();
  if (command < 0) {
    report(report_fd, 'E', errno);
    return 127;
  }
  if (command == 0) exec_command(report_fd, argv[2], argv + 3, original);

  for (;;) {
    // Reap everything that has ended: the command, and orphans re-parented to us. Without a
    // signalfd the wait blocks and nothing is forwarded.
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, sfd < 0 ? __WALL : WNOHANG | __WALL)) > 0;) {
      if (pid == command) finish(report_fd, status);
      if (sfd < 0) break;
    }
    signalfd_siginfo info;
    if (sfd >= 0 && read(sfd, &info, sizeof info) == sizeof info && int(info.ssi_signo) != SIGCHLD)
      kill(command, int(info.ssi_signo));
  }
}
