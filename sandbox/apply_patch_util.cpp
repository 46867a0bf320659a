#include "sandbox/apply_patch_util.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace llmx::patch::util {

bool is_unicode_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

namespace {

// Decodes the code point starting at s[i]; returns its length, or 0 when the bytes are not a
// well-formed sequence.
size_t decode_at(std::string_view s, size_t i, char32_t& out) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    out = b;
    return 1;
  }
  size_t len;
  char32_t cp;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
    cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  out = cp;
  return len;
}

// Length of the whitespace code point ending at s[end-1], or 0.
size_t space_before(std::string_view s, size_t end) {
  // A code point is at most 4 bytes: try each possible start.
  for (size_t len = 1; len <= 4 && len <= end; ++len) {
    char32_t cp;
    if (decode_at(s, end - len, cp) == len) return is_unicode_space(cp) ? len : 0;
  }
  return 0;
}

}  // namespace

std::string_view trim_start(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    size_t n = decode_at(s, i, cp);
    if (n == 0 || !is_unicode_space(cp)) break;
    i += n;
  }
  return s.substr(i);
}

std::string_view trim_end(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t n = space_before(s, end);
    if (n == 0) break;
    end -= n;
  }
  return s.substr(0, end);
}

std::string_view trim(std::string_view s) { return trim_end(trim_start(s)); }

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t n = decode_at(s, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string os_error_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer (possibly a static string, not buf).
  const char* msg = strerror_r(err, buf, sizeof buf);
  return std::string(msg) + " (os error " + std::to_string(err) + ")";
}

ReadResult read_bytes(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {std::nullopt, os_error_text(errno)};
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return {std::nullopt, os_error_text(err)};
    }
    if (n == 0) break;
    data.append(buf, size_t(n));
  }
  ::close(fd);
  return {std::move(data), {}};
}

ReadResult read_text(const std::string& path) {
  ReadResult r = read_bytes(path);
  if (r.data && !valid_utf8(*r.data)) return {std::nullopt, "stream did not contain valid UTF-8"};
  return r;
}

}  // namespace llmx::patch::util
