// Bounded output capture: the first half of the budget and a ring with the last half, so a
// command that floods output costs at most `cap` bytes per buffer however long it runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace llmx::sandbox {

class HeadTailBuffer {
 public:
  explicit HeadTailBuffer(size_t cap) : head_cap_(cap / 2), tail_cap_(cap - cap / 2) {}

  void append(std::string_view d) {
    total_ += d.size();
    if (head_.size() < head_cap_) {
      size_t n = std::min(d.size(), head_cap_ - head_.size());
      head_.append(d.data(), n);
      d.remove_prefix(n);
    }
    if (d.empty() || tail_cap_ == 0) return;
    if (d.size() >= tail_cap_) {  // replaces the whole ring
      tail_.assign(d.substr(d.size() - tail_cap_));
      pos_ = 0;
      return;
    }
    if (tail_.size() < tail_cap_) {  // still filling
      size_t n = std::min(d.size(), tail_cap_ - tail_.size());
      tail_.append(d.data(), n);
      d.remove_prefix(n);
    }
    while (!d.empty()) {  // overwrite the oldest bytes
      size_t n = std::min(d.size(), tail_cap_ - pos_);
      std::memcpy(tail_.data() + pos_, d.data(), n);
      pos_ = (pos_ + n) % tail_cap_;
      d.remove_prefix(n);
    }
  }

  // Head followed by the tail in order; equal to everything appended when total() <= cap.
  std::string str() const {
    std::string s;
    s.reserve(head_.size() + tail_.size());
    s += head_;
    s.append(tail_, pos_, std::string::npos);
    s.append(tail_, 0, pos_);
    return s;
  }
  uint64_t total() const { return total_; }
  size_t kept() const { return head_.size() + tail_.size(); }

 private:
  size_t head_cap_, tail_cap_;
  std::string head_, tail_;
  size_t pos_ = 0;  // next write position once the ring is full (= its oldest byte)
  uint64_t total_ = 0;
};

}  // namespace llmx::sandbox
