#include "protocol/model/tool_output.hpp"

#include <charconv>
#include <cmath>
#include <optional>

namespace llmx {

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Offset where line `index` (0-based, newline-inclusive segments) starts; text.size() past the end.
size_t line_start(std::string_view text, size_t index) {
  size_t pos = 0;
  for (size_t i = 0; i < index; ++i) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return text.size();
    pos = nl + 1;
  }
  return pos;
}

struct Truncated {
  size_t total_lines = 0;
  std::string body;  // head + marker + tail, without the "Total output lines" header
};

// nullopt when the text fits; otherwise the single head/marker/tail cut of E10.
std::optional<Truncated> truncate_body(std::string_view text) {
  size_t total = count_lines(text);
  if (text.size() <= kModelOutputMaxBytes && total <= kModelOutputMaxLines) return std::nullopt;

  size_t head_lines = std::min(kModelOutputHeadLines, total);
  size_t tail_lines = std::min(kModelOutputTailLines, total);
  size_t omitted = total > head_lines + tail_lines ? total - head_lines - tail_lines : 0;
  std::string marker =
      omitted > 0 ? "\n[... omitted " + std::to_string(omitted) + " of " + std::to_string(total) +
                        " lines ...]\n\n"
                  : "\n[... output truncated to fit " + std::to_string(kModelOutputMaxBytes) +
                        " bytes ...]\n\n";

  size_t head_budget = std::min(kModelOutputHeadBytes, kModelOutputMaxBytes - marker.size());
  std::string_view head = utf8_prefix(text.substr(0, line_start(text, head_lines)), head_budget);
  // When fewer than 256 lines overflow the byte limit the head and tail line ranges overlap, but
  // their bytes cannot: the text is then longer than head + marker + tail together.
  size_t tail_budget = kModelOutputMaxBytes - head.size() - marker.size();
  std::string_view tail = utf8_suffix(text.substr(line_start(text, total - tail_lines)), tail_budget);

  Truncated t;
  t.total_lines = total;
  t.body.reserve(head.size() + marker.size() + tail.size());
  t.body.append(head).append(marker).append(tail);
  return t;
}

std::string header(size_t total_lines) {
  return "Total output lines: " + std::to_string(total_lines) + "\n\n";
}

// Seconds rounded to a tenth, printed in the shortest form that reads back the same (1, 0.5).
std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  double rounded = std::round(seconds * 10.0) / 10.0;
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, rounded);
  return std::string(buf, res.ptr);
}

}  // namespace

size_t count_lines(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && is_continuation(text[end])) --end;
  return text.substr(0, end);
}

std::string_view utf8_suffix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t start = text.size() - max_bytes;
  while (start < text.size() && is_continuation(text[start])) ++start;
  return text.substr(start);
}

std::string truncate_for_model(std::string_view text) {
  auto t = truncate_body(text);
  if (!t) return std::string(text);
  return header(t->total_lines) + t->body;
}

std::string format_exec_output(std::string_view aggregated, int exit_code, double duration_seconds,
                               bool timed_out, int64_t timeout_ms) {
  // Only a timeout puts a line before the output; otherwise the output is read in place (it can
  // be a megabyte, and only about 10 KB of it is kept).
  std::string_view body = aggregated;
  std::string with_note;
  if (timed_out) {
    with_note = "command timed out after " + std::to_string(timeout_ms) + " milliseconds\n";
    body = with_note.append(aggregated);
  }

  std::string out = "Exit code: " + std::to_string(exit_code) + "\n";
  out += "Wall time: " + format_seconds(duration_seconds) + " seconds\n";
  if (auto t = truncate_body(body)) {
    // The line count moves from the body's header into the structured lines.
    out += "Total output lines: " + std::to_string(t->total_lines) + "\n";
    out += "Output:\n";
    out += t->body;
  } else {
    out += "Output:\n";
    out += body;
  }
  return out;
}

std::string truncate_middle(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  auto marker_for = [](size_t removed) {
    return "[... " + std::to_string(removed) + " bytes truncated ...]";
  };
  // Sized for the largest possible count; the real count has no more digits, so it fits.
  size_t marker_len = marker_for(text.size()).size();
  if (marker_len >= max_bytes) return std::string(utf8_prefix(text, max_bytes));
  size_t keep = max_bytes - marker_len;
  std::string_view head = utf8_prefix(text, keep / 2);
  std::string_view tail = utf8_suffix(text, keep - keep / 2);
  std::string out(head);
  out += marker_for(text.size() - head.size() - tail.size());
  out.append(tail);
  return out;
}

}  // namespace llmx
