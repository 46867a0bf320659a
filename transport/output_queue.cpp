#include "transport/output_queue.hpp"

namespace llmx {
namespace {

void empty_out(std::string& buffer, size_t& offset) {
  buffer.clear();
  offset = 0;
  if (buffer.capacity() > OutputQueue::kKeptBytes) buffer.shrink_to_fit();
}

}  // namespace

void OutputQueue::push(std::string_view line) {
  lines_.append(line);
  lines_.push_back('\n');
}

void OutputQueue::push_ahead(std::string_view line) {
  ahead_.append(line);
  ahead_.push_back('\n');
}

std::string_view OutputQueue::next() const {
  std::string_view rest(lines_);
  rest.remove_prefix(offset_);
  if (inside_line()) return rest.substr(0, rest.find('\n') + 1);  // lines_ always ends in '\n'
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
  if (offset_ == lines_.size()) {
    empty_out(lines_, offset_);
  } else if (offset_ > (1u << 20) && offset_ * 2 > lines_.size() && !inside_line()) {
    // Keep the unwritten tail only, so a backlog costs at most twice its size; once the written
    // part is the larger half, so each byte is moved about once (a 16 MiB backlog moved 15 MiB
    // per MiB written); at a line boundary, so a reply still never lands inside a line.
    lines_.erase(0, offset_);
    offset_ = 0;
  }
}

void OutputQueue::clear() {
  lines_.clear();
  lines_.shrink_to_fit();
  offset_ = 0;
  ahead_.clear();
  ahead_.shrink_to_fit();
  ahead_offset_ = 0;
}

}  // namespace llmx
