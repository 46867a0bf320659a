// A small streaming JSON writer on top of fmt. It owns the comma/nesting bookkeeping so callers
// only say what comes next, and it always emits compact, single-line, valid UTF-8 JSON: control
// characters are escaped, invalid UTF-8 is replaced by U+FFFD, so a value can never break the
// one-message-per-line framing of our transports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmx::json {

// Appends `s` as a quoted JSON string to `out`.
void append_escaped(std::string& out, std::string_view s);

// Returns `s` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string sanitize_utf8(std::string_view s);

class Writer {
 public:
  Writer() { own_.reserve(256); }
  // Appends to `target` (which must outlive the writer) instead of a buffer of its own: a batch of
  // lines is written in place, with no copy per line. A writer may point at its own buffer, so it
  // is neither copied nor moved.
  explicit Writer(std::string& target) : out_(&target) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  Writer& begin_object();
  Writer& end_object();
  Writer& begin_array();
  Writer& end_array();
  // Writes an object key; the next call writes its value.
  Writer& key(std::string_view k);
  // A key the code spells (a struct's field name, a union's tag): printable ASCII without quotes
  // or backslashes, written as is, without the scan `key` makes.
  Writer& plain_key(std::string_view k);

  Writer& string(std::string_view s);
  Writer& number(int64_t v);
  Writer& number(uint64_t v);
  Writer& number(int v) { return number(static_cast<int64_t>(v)); }
  Writer& number(double v);  // NaN and infinities are written as null
  Writer& boolean(bool v);
  Writer& null();
  // Inserts already-encoded JSON (trusted to be valid and single-line).
  Writer& raw(std::string_view json);

  // Shorthands for "key": value.
  Writer& field(std::string_view k, std::string_view v) { return key(k).string(v); }
  Writer& field(std::string_view k, const char* v) { return key(k).string(v); }
  Writer& field(std::string_view k, const std::string& v) { return key(k).string(v); }
  Writer& field(std::string_view k, int64_t v) { return key(k).number(v); }
  Writer& field(std::string_view k, int v) { return key(k).number(static_cast<int64_t>(v)); }
  Writer& field(std::string_view k, uint64_t v) { return key(k).number(v); }
  Writer& field(std::string_view k, double v) { return key(k).number(v); }
  Writer& field(std::string_view k, bool v) { return key(k).boolean(v); }

  const std::string& str() const { return *out_; }
  std::string take() { return std::move(*out_); }
  void clear() {
    out_->clear();
    depth_ = 0;
    first_ = 0;
    deep_.clear();
    after_key_ = false;
  }

 private:
  void separate();
  void open(char bracket);
  void close(char bracket);

  std::string own_;
  std::string* out_ = &own_;
  // One bit per open container, innermost lowest: nothing written in it yet. Containers nested
  // deeper than 64 keep the outer bits in deep_.
  uint64_t first_ = 0;
  uint32_t depth_ = 0;
  std::vector<uint64_t> deep_;
  bool after_key_ = false;
};

namespace detail {
// The buffer a ScratchWriter borrows from its thread (base-from-member: it exists before Writer).
struct ScratchBuffer {
  ScratchBuffer();
  ~ScratchBuffer();
  std::string buf;
};
}  // namespace detail

// Writes one large document, a model request's body, into a buffer its thread keeps, and hands
// out an exact-size copy. Grown by doubling from a fresh buffer, every body allocated and freed
// each smaller size on the way, and kept up to twice its size while the request ran.
class ScratchWriter : private detail::ScratchBuffer, public Writer {
 public:
  ScratchWriter() : Writer(buf) {}
  std::string take_exact() const { return std::string(buf); }
};

}  // namespace llmx::json
