#include "transport/output_queue.hpp"

namespace llmx {
namespace {

void empty_out(std::string& buffer, size_t& offset) {
  buffer.clear();
  offset = 0;
  if (buffer.capacity() > OutputQueue::kKeptBytes) buffer.shrink_to_fit();
}

}  // namespace

void OutputQueue::push(std::string line) {
  queued_ += line.size() + 1;
  if (line.size() >= kJoinBelow) {
    line.push_back('\n');
    lines_.push_back(std::move(line));
    return;
  }
  if (lines_.empty() || lines_.back().size() >= kJoinBelow) {
    if (spares_.empty()) {
      lines_.emplace_back().reserve(2 * kJoinBelow);  // filled below kJoinBelow, one line more fits
    } else {
      spare_bytes_ -= spares_.back().capacity();
      lines_.push_back(std::move(spares_.back()));
      spares_.pop_back();
      lines_.back().clear();
    }
  }
  lines_.back().append(line);
  lines_.back().push_back('\n');
}

void OutputQueue::push_ahead(std::string_view line) {
  ahead_.append(line);
  ahead_.push_back('\n');
}

std::string_view OutputQueue::next() const {
  std::string_view rest;
  if (!lines_.empty()) rest = std::string_view(lines_.front()).substr(offset_);
  if (inside_line()) return rest.substr(0, rest.find('\n') + 1);  // a buffer always ends in '\n'
  if (ahead_offset_ < ahead_.size()) return std::string_view(ahead_).substr(ahead_offset_);
  return rest;
}

void OutputQueue::consumed(size_t n) {
  const bool from_lines = inside_line() || ahead_offset_ == ahead_.size();
  if (!from_lines) {
    ahead_offset_ += n;
    if (ahead_offset_ == ahead_.size()) empty_out(ahead_, ahead_offset_);
    return;
  }
  offset_ += n;
  queued_ -= n;
  if (offset_ < lines_.front().size()) return;
  // The buffer is out: it stays as room for the next lines while the spares hold little.
  std::string& done = lines_.front();
  if (done.capacity() >= kJoinBelow && spare_bytes_ + done.capacity() <= kKeptBytes) {
    spare_bytes_ += done.capacity();
    spares_.push_back(std::move(done));
  }
  lines_.pop_front();
  offset_ = 0;
}

size_t OutputQueue::held() const {
  // Heap bytes only: an empty string's own room is inside it.
  static const size_t inline_room = std::string().capacity();
  auto heap = [](const std::string& s) { return s.capacity() > inline_room ? s.capacity() : 0; };
  size_t bytes = spare_bytes_ + heap(ahead_);
  for (const auto& buffer : lines_) bytes += heap(buffer);
  return bytes;
}

void OutputQueue::clear() {
  lines_.clear();
  offset_ = 0;
  queued_ = 0;
  spares_.clear();
  spares_.shrink_to_fit();
  spare_bytes_ = 0;
  ahead_.clear();
  ahead_.shrink_to_fit();
  ahead_offset_ = 0;
}

}  // namespace llmx
