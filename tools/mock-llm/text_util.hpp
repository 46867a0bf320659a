// Small string helpers for the mock model server: JSON string escaping and UTF-8 aware slicing.
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace mockllm {

// Appends `s` to `out` as a quoted JSON string. Invalid UTF-8 bytes become U+FFFD so the
// output is always valid JSON, whatever the tool output or command line contained.
void append_json_string(std::string &out, std::string_view s);
std::string json_string(std::string_view s);
// Like append_json_string but copies bytes >= 0x80 unchecked, so invalid UTF-8 reaches the
// client as is (the non_utf8 scenario; the result is then not valid JSON text).
void append_json_string_unchecked(std::string &out, std::string_view s);

// Trims ASCII whitespace (space, tab, CR, LF, VT, FF) from both ends.
std::string_view trim(std::string_view s);

// Longest prefix of `s` holding at most `max_code_points` UTF-8 code points.
std::string_view utf8_prefix(std::string_view s, size_t max_code_points);

// Nearest index <= pos that does not fall inside a UTF-8 multi-byte sequence, so both
// halves of a split stay valid UTF-8 on their own (each half is sent as its own JSON string).
size_t utf8_boundary_at_or_before(std::string_view s, size_t pos);

// Splits `s` into `parts` non-empty pieces of roughly equal byte size, cutting only on
// code point boundaries. Requires s to hold at least `parts` code points.
std::vector<std::string> split_even(std::string_view s, size_t parts);

// Splits into words, each keeping its trailing space ("Plan updated." -> "Plan ", "updated.").
std::vector<std::string> split_words(std::string_view s);

size_t utf8_length(std::string_view s);

// `t` in UTC through strftime's `format` (RFC 3339 resets, HTTP-dates).
std::string format_utc(std::time_t t, const char *format);

} // namespace mockllm
