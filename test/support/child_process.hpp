// A child process with pipes on stdin, stdout and stderr, for tests and tools that drive the
// llmx binaries. Every blocking call has a time bound: a test fails instead of hanging.
//
//   ChildProcess p({.argv = {"/bin/cat"}});
//   p.write_stdin("hello\n");
//   auto line = p.read_line();        // "hello" (nullopt on EOF or timeout, see last_read())
//   p.close_stdin();
//   auto st = p.wait();               // kill -9 after the timeout; st.timed_out tells
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmx::test {

using Duration = std::chrono::milliseconds;
inline constexpr Duration kDefaultTimeout{10000};

// What is left of a wait until `deadline`, never negative.
inline Duration remaining(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? left : Duration{0};
}

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program path (no PATH search)
  // Added to (or replacing in) the parent's environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Removed from the parent's environment (applied before `env`).
  std::vector<std::string> unset_env;
  std::string cwd;  // empty: the parent's
  // Kill the child when the spawning thread exits (Linux PR_SET_PDEATHSIG), so a crashed test
  // leaves no orphans behind.
  bool die_with_parent = true;
};

struct ExitStatus {
  bool exited = false;     // normal exit; `code` is valid
  int code = -1;
  int signal = 0;          // terminated by this signal
  bool timed_out = false;  // wait() ran out of time and killed the child with SIGKILL
  bool ok() const { return exited && code == 0; }
  std::string describe() const;
};

// What the last read_line() returned nullopt for.
enum class ReadResult { line, eof, timeout };

class ChildProcess {
 public:
  // Throws std::runtime_error when the program cannot be started (with the errno text).
  explicit ChildProcess(SpawnOptions options);
  ~ChildProcess();  // SIGKILL and reap if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes all of `data`; false when the child closed its stdin (EPIPE) or on timeout.
  // Output is drained meanwhile so a child blocked on a full stdout cannot deadlock us.
  bool write_stdin(std::string_view data, Duration timeout = kDefaultTimeout);
  void close_stdin();

  // The next stdout line without its '\n'; nullopt at EOF (a final unterminated piece is
  // returned as a line first) or when `timeout` passes. last_read() says which.
  std::optional<std::string> read_line(Duration timeout = kDefaultTimeout);
  ReadResult last_read() const { return last_read_; }
  bool stdout_eof() const { return out_eof_ && out_buf_.empty(); }

  // Everything on stdout until EOF (or the timeout), including what is buffered.
  std::string read_all_stdout(Duration timeout = kDefaultTimeout);
  // Everything on stderr until EOF (or the timeout).
  std::string read_all_stderr(Duration timeout = kDefaultTimeout);
  // What stderr has said so far (non-blocking drain first).
  std::string stderr_so_far();

  // Waits for the child to exit; after `timeout` kills it with SIGKILL (timed_out = true).
  // Keeps draining stdout and stderr into their buffers while waiting.
  ExitStatus wait(Duration timeout = kDefaultTimeout);
  // The exit status if the child has exited (non-blocking).
  std::optional<ExitStatus> try_wait();
  bool running() { return !try_wait().has_value(); }

  void kill(int sig);
  // SIGTERM, wait up to `grace`, then SIGKILL.
  ExitStatus terminate(Duration grace = std::chrono::milliseconds(3000));

 private:
  // Polls stdout/stderr (and stdin for POLLOUT when `want_write`) for at most `timeout`;
  // appends what is readable to the buffers. Returns true when stdin became writable.
  bool pump(Duration timeout, bool want_write = false);
  void drain_nonblocking();
  void read_fd(int& fd, std::string& buf, bool& eof);
  void close_fd(int& fd);

  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_buf_, err_buf_;
  bool out_eof_ = false, err_eof_ = false;
  std::optional<ExitStatus> status_;
  ReadResult last_read_ = ReadResult::line;
};

}  // namespace llmx::test
