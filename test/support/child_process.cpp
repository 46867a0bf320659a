#include "test/support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace llmx::test {

namespace {

using Clock = std::chrono::steady_clock;


void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

ExitStatus decode(int wstatus) {
  ExitStatus st;
  if (WIFEXITED(wstatus)) {
    st.exited = true;
    st.code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    st.signal = WTERMSIG(wstatus);
  }
  return st;
}

}  // namespace

std::string ExitStatus::describe() const {
  std::string s;
  if (exited)
    s = "exit code " + std::to_string(code);
  else if (signal)
    s = "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  else
    s = "unknown status";
  if (timed_out) s += " after timing out (SIGKILL sent by the test)";
  return s;
}

ChildProcess::ChildProcess(SpawnOptions options) {
  if (options.argv.empty()) throw std::runtime_error("ChildProcess: empty argv");

  // Everything the child needs is prepared before fork: after fork only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto name = kv.substr(0, kv.find('='));
    bool drop = false;
    for (const auto& u : options.unset_env) drop = drop || name == u;
    for (const auto& [k, v] : options.env) drop = drop || name == k;
    if (!drop) env_strings.emplace_back(kv);
  }
  // A later entry for the same name wins.
  for (size_t i = 0; i < options.env.size(); ++i) {
    bool overridden = false;
    for (size_t j = i + 1; j < options.env.size(); ++j) overridden = overridden || options.env[j].first == options.env[i].first;
    if (!overridden) env_strings.push_back(options.env[i].first + "=" + options.env[i].second);
  }
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : options.argv) argv.push_back(s.data());
  argv.push_back(nullptr);

  int in[2], out[2], err[2], status_pipe[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC) ||
      ::pipe2(status_pipe, O_CLOEXEC))
    throw std::runtime_error(std::string("ChildProcess: pipe2: ") + std::strerror(errno));

  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("ChildProcess: fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Child. Restore default signal dispositions and mask the test process may have changed.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (options.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
    }
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    int e = 0;
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) {
      e = errno;
    } else {
      ::execve(argv[0], argv.data(), envp.data());
      e = errno;
    }
    ssize_t ignored = ::write(status_pipe[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(status_pipe[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
  err_fd_ = err[0];
  // The status pipe closes on a successful exec (CLOEXEC) or carries the errno of the failure.
  int child_errno = 0;
  ssize_t n;
  do n = ::read(status_pipe[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (n == sizeof child_errno) {
    int ws = 0;
    ::waitpid(pid_, &ws, 0);
    pid_ = -1;
    close_fd(in_fd_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    throw std::runtime_error("ChildProcess: cannot start " + options.argv[0] +
                             (options.cwd.empty() ? "" : " in " + options.cwd) + ": " + std::strerror(child_errno));
  }
  set_nonblocking(in_fd_);
  set_nonblocking(out_fd_);
  set_nonblocking(err_fd_);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int ws = 0;
    while (::waitpid(pid_, &ws, 0) < 0 && errno == EINTR) {
    }
  }
  close_fd(in_fd_);
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void ChildProcess::close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void ChildProcess::read_fd(int& fd, std::string& buf, bool& eof) {
  char chunk[65536];
  while (fd >= 0) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    eof = true;  // 0 = EOF, or a hard error: either way nothing more will come
    close_fd(fd);
  }
}

bool ChildProcess::pump(Duration timeout, bool want_write) {
  pollfd fds[3];
  int n = 0;
  int out_i = -1, err_i = -1, in_i = -1;
  if (out_fd_ >= 0) fds[out_i = n++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[err_i = n++] = {err_fd_, POLLIN, 0};
  if (want_write && in_fd_ >= 0) fds[in_i = n++] = {in_fd_, POLLOUT, 0};
  if (n == 0) {
    std::this_thread::sleep_for(std::min(timeout, Duration{5}));
    return false;
  }
  int r = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(timeout.count()));
  if (r <= 0) return false;
  if (out_i >= 0 && fds[out_i].revents) read_fd(out_fd_, out_buf_, out_eof_);
  if (err_i >= 0 && fds[err_i].revents) read_fd(err_fd_, err_buf_, err_eof_);
  return in_i >= 0 && fds[in_i].revents != 0;
}

void ChildProcess::drain_nonblocking() {
  read_fd(out_fd_, out_buf_, out_eof_);
  read_fd(err_fd_, err_buf_, err_eof_);
}

bool ChildProcess::write_stdin(std::string_view data, Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!data.empty()) {
    if (in_fd_ < 0) return false;
    ssize_t n = ::write(in_fd_, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Clock::now() >= deadline) return false;
      pump(std::min(remaining(deadline), Duration{100}), true);
      continue;
    }
    return false;  // EPIPE: the child closed its stdin (SIGPIPE is the test's business)
  }
  return true;
}

void ChildProcess::close_stdin() { close_fd(in_fd_); }

std::optional<std::string> ChildProcess::read_line(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto nl = out_buf_.find('\n'); nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      last_read_ = ReadResult::line;
      return line;
    }
    if (out_eof_) {
      if (!out_buf_.empty()) {
        std::string line = std::move(out_buf_);
        out_buf_.clear();
        last_read_ = ReadResult::line;
        return line;
      }
      last_read_ = ReadResult::eof;
      return std::nullopt;
    }
    auto left = remaining(deadline);
    if (left.count() == 0) {
      drain_nonblocking();
      if (out_buf_.find('\n') != std::string::npos || out_eof_) continue;
      last_read_ = ReadResult::timeout;
      return std::nullopt;
    }
    pump(left);
  }
}

std::string ChildProcess::read_all_stdout(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!out_eof_ && remaining(deadline).count() > 0) pump(remaining(deadline));
  drain_nonblocking();
  return std::exchange(out_buf_, std::string());
}

std::string ChildProcess::read_all_stderr(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!err_eof_ && remaining(deadline).count() > 0) pump(remaining(deadline));
  drain_nonblocking();
  return err_buf_;
}

std::string ChildProcess::stderr_so_far() {
  drain_nonblocking();
  return err_buf_;
}

std::optional<ExitStatus> ChildProcess::try_wait() {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  int ws = 0;
  pid_t r;
  do r = ::waitpid(pid_, &ws, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == pid_) status_ = decode(ws);
  return status_;
}

ExitStatus ChildProcess::wait(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto st = try_wait()) {
      drain_nonblocking();
      return *st;
    }
    if (remaining(deadline).count() == 0) break;
    // Drain output so a child blocked on a full pipe can finish; poll in short slices so the
    // exit is noticed promptly even when the child's pipes stay open (inherited by grandchildren).
    pump(std::min(remaining(deadline), Duration{5}));
  }
  kill(SIGKILL);
  int ws = 0;
  while (::waitpid(pid_, &ws, 0) < 0 && errno == EINTR) {
  }
  status_ = decode(ws);
  status_->timed_out = true;
  drain_nonblocking();
  return *status_;
}

void ChildProcess::kill(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

ExitStatus ChildProcess::terminate(Duration grace) {
  if (auto st = try_wait()) return *st;
  kill(SIGTERM);
  return wait(grace);
}

}  // namespace llmx::test
