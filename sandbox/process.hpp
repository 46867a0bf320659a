// Child processes for tool calls (engine.md §6.1-6.2): spawning with an optional sandbox, one
// epoll thread that streams the output of every child, timeouts and process-group kills.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/core/policy.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx::sandbox {

enum class Stream : uint8_t { out, err };
inline std::string_view to_string(Stream s) {
  return s == Stream::out ? "stdout" : "stderr";
}

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up on the PATH of `env` (execvp semantics)
  std::string cwd;
  std::map<std::string, std::string> env;  // the complete child environment (see exec_env.hpp)
  std::optional<SandboxPolicy> sandbox;    // nullopt: no sandbox
  std::string sandbox_cwd;                 // the policy's cwd (turn cwd); empty = cwd
  SandboxOptions sandbox_options;
  int64_t timeout_ms = 0;  // 0 = none
  // Per stream and for the aggregate: the first half and the last half are kept, *_total counts
  // everything. The cut is far wider than any model-facing truncation (E10), so a head+tail
  // formatter never shows the seam; it should use *_total for "N bytes omitted".
  size_t max_capture_bytes = 1u << 20;
  size_t max_delta_chunks = 10000;  // live on_output calls per stream; capture continues after
  // stdin: /dev/null, or a pipe the caller feeds with ProcessLoop::write (a long-lived child
  // such as an MCP server over stdio).
  bool stdin_pipe = false;
};

struct ExecResult {
  int exit_code = -1;  // exit status; 128+signal after a signal; 124 on timeout; -1 spawn error
  int signal = 0;      // terminating signal (0 when exited, and on timeout)
  bool timed_out = false;
  bool killed = false;     // kill() or loop shutdown before the child exited
  bool sandboxed = false;  // every restriction of the requested policy was applied
  std::string stdout_text, stderr_text, aggregated;  // raw bytes (decode lossily as UTF-8)
  uint64_t stdout_total = 0, stderr_total = 0;
  std::chrono::nanoseconds duration{0};
  // Set when the command never ran, e.g. "failed to run `foo`: No such file or directory".
  // The tool layer prefixes "execution error: " like for its other errors.
  std::string spawn_error;
};

// What denial detection reads of a finished command. Views: a caller holding the output in another
// shape (the exec actor's ExecDone) checks it without copying up to three megabytes of output.
struct DenialFacts {
  int exit_code = -1;
  bool timed_out = false;
  std::string_view stdout_text, stderr_text, aggregated, spawn_error;
};

// engine.md §6.6: whether a failed command looks like the sandbox said no (drives the retry).
bool is_sandbox_denial(const DenialFacts& facts, bool sandboxed);

class ProcessHandler {
 public:
  virtual ~ProcessHandler() = default;
  // Called on the loop thread: keep these short, every child shares the thread.
  virtual void on_output(Stream stream, std::string_view bytes) {}
  virtual void on_exit(ExecResult result) = 0;  // exactly once per spawn()
};

class ProcessLoop {
 public:
  ProcessLoop();
  ~ProcessLoop();  // kills every child (on_exit with killed = true) and joins the thread
  ProcessLoop(const ProcessLoop&) = delete;
  ProcessLoop& operator=(const ProcessLoop&) = delete;

  // Thread-safe. Resolves the program and prepares the sandbox on the calling thread; the fork
  // itself happens on the loop thread, whose lifetime the children's PDEATHSIG is tied to.
  // Errors are reported through on_exit(spawn_error).
  uint64_t spawn(SpawnRequest request, std::shared_ptr<ProcessHandler> handler);
  // Thread-safe. SIGKILLs the whole process group; on_exit follows with killed = true.
  void kill(uint64_t id);
  // Thread-safe, for children spawned with stdin_pipe: queues bytes for the child's stdin (written
  // by the loop thread as the pipe takes them, never blocking), or closes it once what is queued
  // is written. Bytes for a child that is gone or stopped reading are dropped.
  void write(uint64_t id, std::string bytes);
  void close_stdin(uint64_t id);
  size_t running() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The process loop every child of llmx goes through: commands of every conversation, one-off
// commands and the git runs behind gitDiffToRemote. Never destroyed: its destructor would report
// to actors of an actor system that is already gone at exit; children die with the process
// anyway (PR_SET_PDEATHSIG).
ProcessLoop& shared_process_loop();

}  // namespace llmx::sandbox
