// What a person running `llmx exec` sees on stderr (issue 14): a header, each command with its
// exit code, duration and first lines of output, each patch with its files and +/- counts, plan
// updates, reasoning summaries, MCP tool calls, warnings and errors, and the tokens used. The
// final answer alone goes to stdout (so `llmx exec … > answer.txt` works). Plain code.
#pragma once

#include <string>

#include "protocol/core/event_msgs.hpp"

namespace llmx::exec_human {

struct Header {
  std::string version, model, provider, cwd, sandbox, approval;
};

class Printer {
 public:
  explicit Printer(bool color) : color_(color) {}

  std::string header(const Header& h, const std::string& thread_id) const;
  // The stderr text for one event ("" for most deltas and bookkeeping).
  std::string on(const Event& ev);

  // How many lines of a command's output are shown.
  static constexpr size_t kOutputLines = 5;

 private:
  std::string paint(std::string_view code, std::string_view text) const;

  bool color_;
  TokenUsage usage_;
  // The latest agent message: shown on stderr once something follows it; the last one is the
  // final answer, which goes to stdout instead.
  std::optional<std::string> pending_message_;
};

// "+3 -1" for one file change: added and removed lines.
std::string change_counts(const FileChange& change);

}  // namespace llmx::exec_human
