#include "protocol/config/toml_guard.hpp"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "protocol/base/utf8.hpp"

namespace llmx {

namespace {

bool is_ascii(char c) { return static_cast<unsigned char>(c) < 0x80; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_break(char c) { return c == '\n' || c == '\r'; }

// The code point of the UTF-8 sequence at s[i] and its length in bytes; nullopt when it is not a
// well-formed scalar value, which toml++'s decoder rejects before it asks anything about it.
std::optional<std::pair<char32_t, size_t>> decode(std::string_view s, size_t i) {
  size_t len = utf8_sequence_length(s, i);
  if (len < 2) return std::nullopt;
  char32_t cp = static_cast<unsigned char>(s[i]) & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  return std::pair{cp, len};
}

// One pass over the text, tracking whether it is inside a string or a comment and where it is
// (line, and column in code points, as toml++ counts them).
class Scan {
 public:
  Scan(std::string_view text, std::string_view source) : s_(text), source_(source) {}

  GuardedToml run() {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;  // a byte order mark, which toml++ skips too
    In in = In::outside;
    while (i_ < s_.size()) {
      char c = s_[i_];
      switch (in) {
        case In::outside:
          if (bare_ && !ends_bare(c)) {  // a bare value's own character, quotes and `=` included
            if (!is_ascii(c)) fail(kOutside);
            prev_ = c;
            break;
          }
          bare_ = false;
          if (c == '#') {
            in = In::comment;
          } else if ((c == '"' || c == '\'') && opens_string()) {
            bool multi = run_of(c) >= 3;
            in = c == '"' ? (multi ? In::ml_basic : In::basic) : (multi ? In::ml_literal : In::literal);
            skip(multi ? 3 : 1);
            continue;
          } else if (!is_ascii(c)) {
            fail(kOutside);
          } else {
            structure(c);
          }
          break;
        case In::comment:
          if (c == '\n') {
            in = In::outside;
            structure(c);
          }
          break;
        case In::literal:
          if (c == '\'' || c == '\n') {
            in = In::outside;
            structure(c);
          }
          break;
        case In::ml_literal:
          if (c == '\'' && run_of('\'') >= 3) {
            skip(run_of('\''));  // up to two of them are the string's own
            in = In::outside;
            prev_ = c;
            continue;
          }
          break;
        case In::basic:
        case In::ml_basic:
          if (c == '\\') {
            escape(in == In::ml_basic);
            continue;
          }
          if (c == '"' && (in == In::basic || run_of('"') >= 3)) {
            skip(in == In::basic ? 1 : run_of('"'));
            in = In::outside;
            prev_ = c;
            continue;
          }
          if (c == '\n' && in == In::basic) {  // unterminated: toml++ says so
            in = In::outside;
            structure(c);
          }
          break;
      }
      step();
    }
    if (out_.text) out_.text->append(s_.substr(copied_));
    return std::move(out_);
  }

 private:
  enum class In { outside, comment, basic, ml_basic, literal, ml_literal };

  static constexpr const char* kOutside =
      "a non-ASCII character outside a string or comment (TOML allows them only there)";

  // toml++ reads a string only where a key or a value begins. A bare value (a number, date,
  // boolean) it scans up to a terminator, quotes and `=` included (`1."x"`, `0:4/="x"`), so the
  // guard must not take such a quote for the start of a string. Where a key or value begins is
  // known from the last character that is not blank (prev_), whether a key is being read
  // (in_key_: a `.` joins key parts but is a decimal point in a value), and whether a bare value
  // is being read (bare_).
  bool opens_string() const {
    switch (prev_) {
      case '\n': case '=': case '[': case ',': case '{': return true;
      case '.': return in_key_;
      default: return false;
    }
  }
  static bool ends_bare(char c) {
    return is_blank(c) || is_break(c) || c == ']' || c == '}' || c == ',' || c == '#';
  }
  // Follows the brackets outside strings and comments: headers and arrays (`[`), inline tables.
  void structure(char c) {
    if (is_blank(c) || c == '\r') return;
    switch (c) {
      case '\n':
        if (nest_.empty()) in_key_ = true;  // the next statement begins with a key
        break;
      case '=':
        in_key_ = false;
        break;
      case '[': {
        bool header = in_key_ && (nest_.empty() || nest_.back() == Nest::header);
        nest_.push_back(header ? Nest::header : Nest::array);
        in_key_ = header;
        break;
      }
      case '{':
        nest_.push_back(Nest::table);
        in_key_ = true;
        break;
      case ',':
        if (!nest_.empty() && nest_.back() == Nest::table) in_key_ = true;
        break;
      case ']':
      case '}':
        if (!nest_.empty()) nest_.pop_back();
        in_key_ = false;
        break;
      default:
        if (!in_key_) bare_ = true;
        break;
    }
    prev_ = c;
  }

  // At a backslash inside a basic string.
  void escape(bool multi) {
    step();
    if (i_ >= s_.size()) return;
    if (!is_ascii(s_[i_])) fail("a backslash followed by a non-ASCII character (not a valid escape)");
    if (!multi || !(is_blank(s_[i_]) || is_break(s_[i_]))) {
      step();  // the escaped character, so that `\"` does not end the string
      return;
    }
    // A line-ending backslash: blanks, a line break, then every blank and break is trimmed.
    while (i_ < s_.size() && is_blank(s_[i_])) step();
    if (i_ < s_.size() && !is_ascii(s_[i_]))
      fail("a backslash followed by a non-ASCII character (not a valid escape or line ending)");
    if (i_ >= s_.size() || !is_break(s_[i_])) return;  // not a line ending: toml++ reports it
    while (i_ < s_.size() && (is_blank(s_[i_]) || is_break(s_[i_]))) step();
    if (i_ >= s_.size() || is_ascii(s_[i_])) return;
    auto cp = decode(s_, i_);
    if (!cp) return;
    if (!out_.text) out_.text.emplace().reserve(s_.size() + 16);
    out_.text->append(s_.substr(copied_, i_ - copied_));
    auto code = static_cast<uint32_t>(cp->first);
    bool small = code <= 0xFFFF;
    out_.text->append(small ? fmt::format("\\u{:04X}", code) : fmt::format("\\U{:08X}", code));
    out_.escapes.push_back({line_, column_, small ? 5u : 9u});
    skip(cp->second);
    copied_ = i_;
  }

  // Moves past one byte; a column is a code point, so continuation bytes do not count.
  void step() {
    if (s_[i_] == '\n') {
      ++line_;
      column_ = 1;
    } else if ((static_cast<unsigned char>(s_[i_]) & 0xC0) != 0x80) {
      ++column_;
    }
    ++i_;
  }
  void skip(size_t n) {
    while (n-- > 0 && i_ < s_.size()) step();
  }
  size_t run_of(char c) const {
    size_t k = i_;
    while (k < s_.size() && s_[k] == c) ++k;
    return k - i_;
  }
  [[noreturn]] void fail(const char* what) const {
    toml::source_path_ptr path;
    if (!source_.empty()) path = std::make_shared<const std::string>(source_);
    throw toml::parse_error(what, toml::source_position{line_, column_}, path);
  }

  std::string_view s_;
  std::string_view source_;  // for errors: made a path only when one is thrown
  size_t i_ = 0;
  toml::source_index line_ = 1, column_ = 1;
  GuardedToml out_;
  size_t copied_ = 0;  // how much of s_ out_.text holds
  enum class Nest { header, array, table };
  std::vector<Nest> nest_;
  char prev_ = '\n';
  bool in_key_ = true;
  bool bare_ = false;
};

}  // namespace

toml::source_position GuardedToml::original(toml::source_position p) const {
  for (const auto& e : escapes) {
    if (e.line != p.line || p.column <= e.column) continue;
    p.column = p.column <= e.column + e.extra ? e.column : p.column - e.extra;
    break;
  }
  return p;
}

GuardedToml guard_toml_text(std::string_view text, std::string_view source) {
  return Scan(text, source).run();
}

toml::table parse_toml(std::string_view text, std::string_view source, GuardedToml& guard) {
  guard = guard_toml_text(text, source);
  return toml::parse(guard.text ? std::string_view(*guard.text) : text, source);
}

toml::table parse_toml(std::string_view text, std::string_view source) {
  GuardedToml guard;
  return parse_toml(text, source, guard);
}

}  // namespace llmx
