#include "protocol/base/json_repair.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <vector>

namespace llmx::json {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the `\uXXXX` escape at `at` (pointing at the backslash); -1 when there is none.
int escaped_unit(std::string_view s, size_t at) {
  if (at + 6 > s.size() || s[at] != '\\' || s[at + 1] != 'u') return -1;
  int v = 0;
  for (size_t k = at + 2; k < at + 6; ++k) {
    int h = hex_value(s[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

bool is_high(int u) { return u >= 0xD800 && u <= 0xDBFF; }
bool is_low(int u) { return u >= 0xDC00 && u <= 0xDFFF; }

bool fits_64_bits(std::string_view tok) {
  if (tok.starts_with('-')) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    return ec == std::errc() && p == tok.data() + tok.size();
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  return ec == std::errc() && p == tok.data() + tok.size();
}

bool fits_double(std::string_view tok) {
  // strtod, not from_chars: it tells overflow (HUGE_VAL) from underflow (1e-400 reads as zero,
  // as simdjson reads it).
  return !std::isinf(std::strtod(std::string(tok).c_str(), nullptr));
}

}  // namespace

bool is_integer_token(std::string_view token) {
  return !token.empty() && token.find_first_of(".eE") == std::string_view::npos;
}

std::optional<Repaired> repair_unrepresentable(std::string_view in) {
  Repaired out;
  out.text.reserve(in.size() + 16);
  bool changed = false;
  std::vector<char> stack;  // 'o' object, 'a' array
  bool expect_key = false;  // inside an object, where the next string is a key
  std::string_view top_key;  // the current member's key in the top-level object
  size_t i = 0;
  const size_t n = in.size();
  while (i < n) {
    char c = in[i];
    if (c == '{' || c == '[') {
      stack.push_back(c == '{' ? 'o' : 'a');
      expect_key = c == '{';
      out.text += c;
      ++i;
    } else if (c == '}' || c == ']') {
      if (stack.empty()) return std::nullopt;
      stack.pop_back();
      expect_key = false;
      out.text += c;
      ++i;
    } else if (c == ',') {
      expect_key = !stack.empty() && stack.back() == 'o';
      out.text += c;
      ++i;
    } else if (c == ':') {
      expect_key = false;
      out.text += c;
      ++i;
    } else if (c == '"') {
      const size_t start = i + 1;
      out.text += c;
      ++i;
      bool closed = false;
      while (i < n) {
        char d = in[i];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d != '\\') {
          out.text += d;
          ++i;
          continue;
        }
        if (i + 1 >= n) return std::nullopt;
        if (in[i + 1] != 'u') {
          out.text.append(in.substr(i, 2));
          i += 2;
          continue;
        }
        int unit = escaped_unit(in, i);
        if (unit < 0) return std::nullopt;  // malformed, not merely unrepresentable
        if (is_high(unit) && is_low(escaped_unit(in, i + 6))) {
          out.text.append(in.substr(i, 12));
          i += 12;
        } else if (is_high(unit) || is_low(unit)) {
          out.text += "\\uFFFD";
          changed = true;
          i += 6;
        } else {
          out.text.append(in.substr(i, 6));
          i += 6;
        }
      }
      if (!closed) return std::nullopt;
      if (expect_key && stack.size() == 1) top_key = in.substr(start, i - start);
      out.text += '"';
      ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = i;
      while (end < n && (in[end] == '-' || in[end] == '+' || in[end] == '.' || in[end] == 'e' || in[end] == 'E' ||
                         (in[end] >= '0' && in[end] <= '9')))
        ++end;
      std::string_view tok = in.substr(i, end - i);
      bool integer = is_integer_token(tok);
      std::string replacement;
      if (!fits_double(tok)) {
        replacement = "\"" + std::string(tok) + "\"";
      } else if (integer && !fits_64_bits(tok)) {
        replacement = std::string(tok) + ".0";
      }
      if (replacement.empty()) {
        out.text.append(tok);
      } else {
        out.text += replacement;
        changed = true;
        if (stack.size() == 1 && stack.back() == 'o' && top_key == "id") out.top_level_id = std::string(tok);
      }
      i = end;
    } else {
      out.text += c;
      ++i;
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace llmx::json
