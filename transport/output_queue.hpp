// What a client has not read yet, as the stdout writer keeps it: JSON lines in order, plus
// replies that may go ahead of the queued lines (a ping must not wait behind megabytes of a slow
// client's notifications). A reply goes out at the next line boundary, never inside a line, and
// replies keep their own order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmx {

class OutputQueue {
 public:
  // Queues one line in order (the newline is added). A large line (a batch of a conversation's
  // lines) is kept as it comes, moved in, not copied; small ones are joined into one buffer, so
  // a write still takes many of them.
  void push(std::string line);
  // Queues one line to go before every line pushed in order that has not started yet.
  void push_ahead(std::string_view line);

  // The bytes to write next: the rest of the line being written, else the replies ahead, else
  // the queued lines (of one buffer). Empty when nothing is queued.
  std::string_view next() const;
  // `n` bytes of next() were written.
  void consumed(size_t n);

  size_t size() const { return (ahead_.size() - ahead_offset_) + queued_; }
  bool empty() const { return size() == 0; }
  void clear();

  // A buffer that has been written out keeps its room for the next lines up to this size, and is
  // freed whole past it: kept, a slow client's largest backlog stayed resident for the life of
  // the session, and the largest one so far grows with time (half of a long soak's RSS creep).
  static constexpr size_t kKeptBytes = size_t{1} << 20;
  // Lines shorter than this are joined into the last buffer while it is shorter than this too.
  static constexpr size_t kJoinBelow = size_t{64} << 10;
  // Bytes held for lines, written or not (tests).
  size_t held() const;

 private:
  bool inside_line() const { return offset_ > 0 && lines_.front()[offset_ - 1] != '\n'; }

  std::deque<std::string> lines_;  // each buffer ends in '\n'
  size_t offset_ = 0;              // bytes of lines_.front() already written
  size_t queued_ = 0;              // bytes of lines_ not yet written
  // Written-out buffers, room for the next small lines (at most kKeptBytes of them): a backlog
  // that comes and goes reuses its pages instead of faulting in fresh ones each time.
  std::vector<std::string> spares_;
  size_t spare_bytes_ = 0;
  std::string ahead_;
  size_t ahead_offset_ = 0;
};

// When a client is behind: past `pause_at` unread bytes, until it has read down to a quarter of
// that (the gap keeps the model streams from pausing and resuming at every line).
class PauseMarks {
 public:
  explicit PauseMarks(uint64_t pause_at) : pause_at_(pause_at) {}
  // The new state when `queued` bytes change it, else nothing.
  std::optional<bool> update(uint64_t queued) {
    const bool behind = behind_ ? queued > pause_at_ / 4 : queued > pause_at_;
    if (behind == behind_) return std::nullopt;
    behind_ = behind;
    return behind;
  }
  bool behind() const { return behind_; }

 private:
  uint64_t pause_at_;
  bool behind_ = false;
};

}  // namespace llmx
