// Readable, rate-limited progress for an MCP tools/call (DECISIONS P6; MCP 2025-11-25 progress):
// a host shows `message` to its user, so each says what the turn does now ("running `cargo
// test`", "answer: 120 tokens"). Milestones (a command, a patch, an approval, the end) always
// go out; streaming counts at most once per interval. Plain code: the session encodes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/core/event_msgs.hpp"

namespace llmx::mcp {

class ProgressReporter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ProgressReporter(std::chrono::milliseconds interval = std::chrono::milliseconds(250))
      : interval_(interval) {}

  // The message to send for this event at `now`; nullopt when it says nothing new or comes
  // too soon after the last one.
  std::optional<std::string> on_event(const EventMsg& msg, Clock::time_point now);
  // The value of the last message (1, 2, ...: increases with every message sent).
  uint64_t progress() const { return sent_; }

 private:
  std::optional<std::string> send(std::string message, Clock::time_point now);
  std::optional<std::string> maybe(std::string message, Clock::time_point now);

  std::chrono::milliseconds interval_;
  std::optional<Clock::time_point> last_;
  uint64_t sent_ = 0;
  uint64_t answer_tokens_ = 0, thinking_tokens_ = 0;
};

// How a command is shown in a progress message: the script of `bash -lc '<script>'`, else the
// shell-quoted words; cut to one line of at most 80 characters.
std::string progress_command(const std::vector<std::string>& argv);

}  // namespace llmx::mcp
