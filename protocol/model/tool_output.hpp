// What the model sees of a tool's output (engine.md §5.8, §5.9; DECISIONS E10): one truncation
// pass that keeps the head and the tail around a marker, and the text form of exec results.
// Every cut lands on a UTF-8 character boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace llmx {

inline constexpr size_t kModelOutputMaxBytes = 10240;
inline constexpr size_t kModelOutputMaxLines = 256;
inline constexpr size_t kModelOutputHeadLines = 128;
inline constexpr size_t kModelOutputHeadBytes = 5120;
inline constexpr size_t kModelOutputTailLines = 128;
inline constexpr size_t kUiErrorMaxBytes = 2048;

// Unchanged when `text` has at most 10240 bytes and 256 lines. Otherwise
// `Total output lines: <N>\n\n` + head + marker + tail, where head is the first 128 lines cut to
// 5120 bytes, the marker is `\n[... omitted <k> of <N> lines ...]\n\n` (or, when no whole line
// was dropped, `\n[... output truncated to fit 10240 bytes ...]\n\n`), and tail is the last 128
// lines cut from the front so that head + marker + tail fit in 10240 bytes.
std::string truncate_for_model(std::string_view text);

// The number of lines as the model output rules count them: a final line without `\n` counts,
// a trailing `\n` does not start another line ("" has 0 lines, "a\n" has 1).
size_t count_lines(std::string_view text);

// The text form of an exec result, which llmx sends to models in place of the reference's JSON:
//   Exit code: <n>
//   Wall time: <seconds, rounded to 0.1, shortest form: 1 not 1.0> seconds
//   [Total output lines: <N>]        (only when the output was truncated)
//   Output:
//   <truncated body>
// A timed-out body starts with `command timed out after <timeout_ms> milliseconds\n`.
std::string format_exec_output(std::string_view aggregated, int exit_code, double duration_seconds,
                               bool timed_out, int64_t timeout_ms);

// Keeps the start and the end of `text` within `max_bytes` (marker included), joined by
// `[... <n> bytes truncated ...]`. For error messages shown in UIs (2048 bytes).
std::string truncate_middle(std::string_view text, size_t max_bytes = kUiErrorMaxBytes);

// The longest prefix of at most `max_bytes` bytes / suffix of at most `max_bytes` bytes that does
// not split a UTF-8 character.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);
std::string_view utf8_suffix(std::string_view text, size_t max_bytes);

}  // namespace llmx
