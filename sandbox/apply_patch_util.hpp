// Small helpers shared by the apply_patch sources and the turn diff tracker. They mirror the Rust
// standard library behaviour the reference implementation relies on (str::trim, from_utf8,
// io::Error display), because those details end up in texts the model and clients see.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llmx::patch::util {

// Rust `char::is_whitespace` (Unicode White_Space) for one code point.
bool is_unicode_space(char32_t c);

// Rust `str::trim`, `trim_start`, `trim_end`: strip Unicode whitespace. Invalid UTF-8 bytes are
// never whitespace.
std::string_view trim(std::string_view s);
std::string_view trim_start(std::string_view s);
std::string_view trim_end(std::string_view s);

// Strict UTF-8 validation (Rust `str::from_utf8`: no overlongs, surrogates or > U+10FFFF).
bool valid_utf8(std::string_view s);

// Rust `io::Error` display for an OS error: "<strerror> (os error <n>)".
std::string os_error_text(int err);

// Whole-file reads. `read_bytes` fails with the errno text; `read_text` additionally rejects
// invalid UTF-8 with "stream did not contain valid UTF-8" (Rust `fs::read_to_string`).
struct ReadResult {
  std::optional<std::string> data;
  std::string error;
};
ReadResult read_bytes(const std::string& path);
ReadResult read_text(const std::string& path);

}  // namespace llmx::patch::util
