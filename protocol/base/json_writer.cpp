#include "protocol/base/json_writer.hpp"

#include "protocol/base/thread_kept.hpp"
#include "protocol/base/utf8.hpp"

#include <cassert>
#include <cmath>
#include <cstring>
#include <iterator>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <fmt/format.h>

namespace llmx::json {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

namespace {
// How many leading bytes of `s` are printable ASCII other than '"' and '\\': what a JSON string
// holds as is, so the common key or short text is copied in one piece.
size_t plain_prefix(std::string_view s) {
  size_t i = 0;
#ifdef __SSE2__
  // Sixteen bytes at a time: as signed bytes, "below 0x20" also takes every byte from 0x80 up.
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i stop = _mm_or_si128(_mm_cmplt_epi8(w, space),
                                      _mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, backslash)));
    if (const int mask = _mm_movemask_epi8(stop)) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t ctrl = (w - ones * 0x20) & ~w;  // bytes < 0x20 (or >= 0x80)
    uint64_t quote = ((w ^ (ones * '"')) - ones) & ~(w ^ (ones * '"'));
    uint64_t slash = ((w ^ (ones * '\\')) - ones) & ~(w ^ (ones * '\\'));
    if (((ctrl | quote | slash | w) & highs) != 0) break;
  }
  for (; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
  }
  return i;
}

// `"s"` and then `tail` (when not 0), for bytes that need no escaping: one append from the stack
// for the common key or short value.
void append_quoted(std::string& out, std::string_view s, char tail = 0) {
  const size_t n = s.size() + (tail ? 3 : 2);
  char small[64];
  char* p = small;
  if (n > sizeof small) {
    const size_t at = out.size();
    out.resize(at + n);
    p = out.data() + at;
  }
  p[0] = '"';
  if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());  // an empty view's data may be null
  p[s.size() + 1] = '"';
  if (tail) p[s.size() + 2] = tail;
  if (p == small) out.append(small, n);
}
}  // namespace

void append_escaped(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  size_t i = plain_prefix(s);
  if (i == s.size()) return append_quoted(out, s);  // nothing to escape or check: one copy
  out.reserve(out.size() + s.size() + 8);
  out.push_back('"');
  size_t run = 0;  // start of the pending run of bytes that need no escaping
  auto flush = [&](size_t end) {
    out.append(s.data() + run, end - run);
  };
  while (i < s.size()) {
    i += plain_prefix(s.substr(i));
    if (i >= s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = utf8_sequence_length(s, i);
      if (len > 0) {
        i += len;
        continue;
      }
      flush(i);
      out.append(kReplacement);
      ++i;
      run = i;
      continue;
    }
    flush(i);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        out.append("\\u00");
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xF]);
    }
    ++i;
    run = i;
  }
  flush(i);
  out.push_back('"');
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out.append(kReplacement);
      ++i;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
  return out;
}

void Writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  if (first_ & 1)
    first_ &= ~uint64_t{1};
  else
    out_->push_back(',');
}

void Writer::open(char bracket) {
  separate();
  out_->push_back(bracket);
  if (depth_ > 0 && depth_ % 64 == 0) {  // the 64 bits are full: keep them aside
    deep_.push_back(first_);
    first_ = 0;
  }
  first_ = (first_ << 1) | 1;
  ++depth_;
}

void Writer::close(char bracket) {
  out_->push_back(bracket);
  --depth_;
  first_ >>= 1;
  if (depth_ > 0 && depth_ % 64 == 0) {
    first_ = deep_.back();
    deep_.pop_back();
  }
}

Writer& Writer::begin_object() {
  open('{');
  return *this;
}

Writer& Writer::end_object() {
  close('}');
  return *this;
}

Writer& Writer::begin_array() {
  open('[');
  return *this;
}

Writer& Writer::end_array() {
  close(']');
  return *this;
}

Writer& Writer::key(std::string_view k) {
  separate();
  append_escaped(*out_, k);
  out_->push_back(':');
  after_key_ = true;
  return *this;
}

Writer& Writer::plain_key(std::string_view k) {
  assert(plain_prefix(k) == k.size());
  separate();
  append_quoted(*out_, k, ':');
  after_key_ = true;
  return *this;
}

Writer& Writer::string(std::string_view s) {
  separate();
  append_escaped(*out_, s);
  return *this;
}

Writer& Writer::number(int64_t v) {
  separate();
  const fmt::format_int digits(v);
  out_->append(digits.data(), digits.size());
  return *this;
}

Writer& Writer::number(uint64_t v) {
  separate();
  const fmt::format_int digits(v);
  out_->append(digits.data(), digits.size());
  return *this;
}

Writer& Writer::number(double v) {
  separate();
  if (!std::isfinite(v)) {
    out_->append("null");
    return *this;
  }
  // Shortest representation that round-trips; integral doubles keep a ".0" so they stay floats.
  auto start = out_->size();
  fmt::format_to(std::back_inserter(*out_), "{}", v);
  if (out_->find_first_of(".eE", start) == std::string::npos) out_->append(".0");
  return *this;
}

Writer& Writer::boolean(bool v) {
  separate();
  out_->append(v ? "true" : "false");
  return *this;
}

Writer& Writer::null() {
  separate();
  out_->append("null");
  return *this;
}

Writer& Writer::raw(std::string_view json) {
  separate();
  out_->append(json);
  return *this;
}

namespace {
constexpr size_t kKeptScratch = 4 << 20;  // a rare larger body is freed, not kept all day
using Kept = ThreadKept<detail::ScratchBuffer, std::string>;
}  // namespace

detail::ScratchBuffer::ScratchBuffer() : buf(Kept::take()) {}

detail::ScratchBuffer::~ScratchBuffer() {
  buf.clear();
  if (buf.capacity() <= kKeptScratch) Kept::keep(std::move(buf));
}

}  // namespace llmx::json
