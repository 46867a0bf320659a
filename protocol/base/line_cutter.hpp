// Cuts a byte stream into lines (without the '\n' or a trailing '\r'), each at most `limit`
// bytes: a longer line is dropped whole and reported as oversized, so one runaway line costs
// nothing but itself. Used for newline-delimited JSON-RPC (our stdin, MCP servers' stdout).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "protocol/base/secret_env.hpp"

namespace llmx {

// Default maximum length of one line a client sends us (LLMX_MAX_LINE_BYTES overrides it).
inline constexpr uint64_t kDefaultMaxLineBytes = 16u << 20;
inline uint64_t max_line_bytes() { return env_count("LLMX_MAX_LINE_BYTES", kDefaultMaxLineBytes); }

class LineCutter {
 public:
  explicit LineCutter(size_t limit) : limit_(limit) {}

  // Calls on_line(std::string& line) per complete line (empty ones included; it may move from
  // it) and on_oversized() per dropped line.
  template <class OnLine, class OnOversized>
  void feed(std::string_view bytes, OnLine&& on_line, OnOversized&& on_oversized) {
    while (!bytes.empty()) {
      auto nl = bytes.find('\n');
      auto piece = bytes.substr(0, nl);
      if (!oversized_) {
        if (line_.size() + piece.size() > limit_) {
          oversized_ = true;
          line_.clear();
          line_.shrink_to_fit();
        } else {
          line_.append(piece);
        }
      }
      if (nl == std::string_view::npos) return;
      end_line(on_line, on_oversized);
      bytes.remove_prefix(nl + 1);
    }
  }

  // End of stream: a last line without its newline counts too.
  template <class OnLine, class OnOversized>
  void finish(OnLine&& on_line, OnOversized&& on_oversized) {
    if (oversized_ || !line_.empty()) end_line(on_line, on_oversized);
  }

 private:
  template <class OnLine, class OnOversized>
  void end_line(OnLine& on_line, OnOversized& on_oversized) {
    if (oversized_) {
      on_oversized();
    } else {
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      on_line(line_);
    }
    line_ = std::string();
    oversized_ = false;
  }

  size_t limit_;
  std::string line_;
  bool oversized_ = false;
};

}  // namespace llmx
