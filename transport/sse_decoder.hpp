// Incremental text/event-stream decoder: bytes in (split anywhere), complete events out.
// `data:` lines of one event are joined with "\n"; `event:` is kept; `id:`, `retry:` and
// comments are ignored; lines may end in \n, \r\n or \r.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace llmx::sse {

struct Event {
  std::string event;  // empty when the server sent no `event:` line
  std::string data;
};

class Decoder {
 public:
  // Events larger than this are an error (protects memory against a runaway stream).
  explicit Decoder(size_t max_event_bytes = 64u << 20) : max_event_bytes_(max_event_bytes) {}

  // Feeds bytes; calls `on_event` for each completed event. Returns false when an event grew
  // beyond the limit (the decoder then stays failed).
  bool feed(std::string_view bytes, const std::function<void(Event&&)>& on_event);

  // End of stream: dispatches a final event that lacked its blank line, if it has data.
  void finish(const std::function<void(Event&&)>& on_event);

  bool failed() const { return failed_; }

 private:
  void process_line(std::string_view line, const std::function<void(Event&&)>& on_event);
  void dispatch(const std::function<void(Event&&)>& on_event);

  size_t max_event_bytes_;
  std::string line_;      // partial line carried between feeds
  bool last_was_cr_ = false;
  Event current_;
  bool has_data_ = false;
  bool failed_ = false;
};

}  // namespace llmx::sse
