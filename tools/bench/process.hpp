// Minimal child-process plumbing for the benchmark: spawn with pipes, line reads with timeout,
// and /proc readings of the child's CPU time and peak memory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmx::bench {

class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~Child();
  pid_t pid() const { return pid_; }
  void write_line(const std::string& line);
  void write_raw(const std::string& data);
  // Next stdout line, or nullopt on timeout / EOF.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  void close_stdin();
  int wait(std::chrono::milliseconds timeout);  // exit code, -1 on timeout (then killed)

  // CPU time of all its threads in seconds (the process CPU clock, in nanoseconds), and VmHWM
  // (peak RSS) in KiB, read from /proc.
  double cpu_seconds() const;
  long peak_rss_kib() const;
  // Context switches (voluntary + involuntary) summed over the child's live threads: each one is a
  // thread handing work to another, the cost batching exists to avoid.
  long context_switches() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;  // exit code once reaped (127 when it could not start)
  int in_ = -1, out_ = -1;
  std::string buf_;
  size_t taken_ = 0;  // bytes of buf_ already returned as lines
};

// Starts mock-llm from `binary` in `slot` (enough threads for every row's connections), at
// `nice` when it is above 0; its URL, or nothing if it did not say one within 10 s.
std::optional<std::string> start_mock_llm(std::optional<Child>& slot, const std::string& binary, int nice = 0);

}  // namespace llmx::bench
