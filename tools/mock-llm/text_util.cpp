#include "tools/mock-llm/text_util.hpp"

namespace mockllm {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid there.
size_t valid_sequence_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if (!is_continuation(cc)) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF (JSON parsers do too).
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

void append_json(std::string &out, std::string_view s, bool repair_utf8) {
  static constexpr char hex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80 && !repair_utf8) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t len = valid_sequence_length(s, i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20 || c == 0x7F) {
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xF]);
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
    ++i;
  }
  out.push_back('"');
}

} // namespace

void append_json_string(std::string &out, std::string_view s) { append_json(out, s, true); }

void append_json_string_unchecked(std::string &out, std::string_view s) {
  append_json(out, s, false);
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view utf8_prefix(std::string_view s, size_t max_code_points) {
  size_t i = 0, n = 0;
  while (i < s.size() && n < max_code_points) {
    ++i;
    while (i < s.size() && is_continuation(static_cast<unsigned char>(s[i]))) ++i;
    ++n;
  }
  return s.substr(0, i);
}

size_t utf8_boundary_at_or_before(std::string_view s, size_t pos) {
  if (pos >= s.size()) return s.size();
  while (pos > 0 && is_continuation(static_cast<unsigned char>(s[pos]))) --pos;
  return pos;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    if (!is_continuation(static_cast<unsigned char>(c))) ++n;
  return n;
}

std::vector<std::string> split_even(std::string_view s, size_t parts) {
  std::vector<std::string> out;
  if (parts == 0) return out;
  out.reserve(parts);
  size_t start = 0;
  for (size_t k = 1; k <= parts; ++k) {
    size_t end = k == parts ? s.size() : utf8_boundary_at_or_before(s, s.size() * k / parts);
    // Guarantee progress: every piece must hold at least one code point.
    if (end <= start) {
      end = start + 1;
      while (end < s.size() && is_continuation(static_cast<unsigned char>(s[end]))) ++end;
    }
    out.emplace_back(s.substr(start, end - start));
    start = end;
  }
  return out;
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) {
      out.emplace_back(s.substr(i));
      break;
    }
    while (j < s.size() && s[j] == ' ') ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string format_utc(std::time_t t, const char *format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

} // namespace mockllm
