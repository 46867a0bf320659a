#include "transport/sse_decoder.hpp"

#include <cstring>

namespace llmx::sse {

bool Decoder::feed(std::string_view bytes, const std::function<void(Event&&)>& on_event) {
  if (failed_) return false;
  size_t i = 0;
  while (i < bytes.size()) {
    char c = bytes[i];
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (c == '\n') {  // second half of a \r\n split across feeds or within this one
        ++i;
        continue;
      }
    }
    // The next line terminator from i: memchr for '\n', then for a '\r' before it (both vectorised).
    const char* from = bytes.data() + i;
    const char* end = bytes.data() + bytes.size();
    const char* nl = static_cast<const char*>(std::memchr(from, '\n', static_cast<size_t>(end - from)));
    if (!nl) nl = end;
    const char* cr = static_cast<const char*>(std::memchr(from, '\r', static_cast<size_t>(nl - from)));
    size_t j = static_cast<size_t>((cr ? cr : nl) - bytes.data());
    if (j == bytes.size()) {
      line_.append(bytes.substr(i));
      if (line_.size() + current_.data.size() > max_event_bytes_) {
        failed_ = true;
        return false;
      }
      return true;
    }
    if (line_.empty()) {
      process_line(bytes.substr(i, j - i), on_event);
    } else {
      line_.append(bytes.substr(i, j - i));
      process_line(line_, on_event);
      line_.clear();
    }
    if (current_.data.size() > max_event_bytes_) {
      failed_ = true;
      return false;
    }
    last_was_cr_ = bytes[j] == '\r';
    i = j + 1;
  }
  return true;
}

void Decoder::finish(const std::function<void(Event&&)>& on_event) {
  if (failed_) return;
  if (!line_.empty()) {
    process_line(line_, on_event);
    line_.clear();
  }
  if (has_data_) dispatch(on_event);
}

void Decoder::process_line(std::string_view line, const std::function<void(Event&&)>& on_event) {
  if (line.empty()) {
    if (has_data_) dispatch(on_event);
    current_.event.clear();
    return;
  }
  if (line.front() == ':') return;  // comment / keep-alive
  std::string_view field = line;
  std::string_view value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data.push_back('\n');
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event.assign(value);
  }
}

void Decoder::dispatch(const std::function<void(Event&&)>& on_event) {
  has_data_ = false;
  on_event(std::move(current_));
  // A handler that only looked leaves the buffers to the next event: no allocation per event.
  current_.event.clear();
  current_.data.clear();
}

}  // namespace llmx::sse
