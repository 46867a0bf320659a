// Reading JSON with simdjson's DOM, plus the error type every decoder throws. The message of a
// DecodeError names the offending field so it can go straight into a JSON-RPC -32602 reply.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace llmx::json {

using Element = simdjson::dom::element;
using Object = simdjson::dom::object;
using Array = simdjson::dom::array;

// `detail` says what is wrong; `path` says where ("op.items.0.text"), empty at the root.
class DecodeError : public std::runtime_error {
 public:
  explicit DecodeError(std::string detail, std::string path = {})
      : std::runtime_error(compose(detail, path)), detail_(std::move(detail)), path_(std::move(path)) {}
  const std::string& detail() const { return detail_; }
  const std::string& path() const { return path_; }
  // The same error, one level deeper: `field` is prepended to the path.
  DecodeError within(std::string_view field) const {
    return DecodeError(detail_, path_.empty() ? std::string(field) : std::string(field) + "." + path_);
  }

 private:
  static std::string compose(const std::string& detail, const std::string& path) {
    return path.empty() ? detail : detail + " at `" + path + "`";
  }
  std::string detail_;
  std::string path_;
};

// A parser that can be reused for many documents; the element returned by parse() stays valid
// until the next parse() on the same Parser.
//
// Its simdjson parser (document, tape and index buffers, sized for the largest document read)
// is lent by a small pool of the constructing thread and goes back to the destroying thread's
// pool, so a Parser made for one request costs no allocation once the pools are warm. Fresh
// buffers for every request were the most frequent 8-64 KB allocations of a busy server
// (README, "Soak").
class Parser {
 public:
  Parser();
  ~Parser();
  Parser(Parser&& other) noexcept : parser_(std::move(other.parser_)), repaired_id_(std::move(other.repaired_id_)) {}
  Parser& operator=(Parser&& other) noexcept;
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // Throws DecodeError("Parse error: ...") on malformed JSON. Valid JSON that simdjson cannot
  // hold as it is (huge integers, lone surrogate escapes) is read through json_repair.hpp.
  Element parse(std::string_view text);
  // After parse(): the exact token of a top-level "id" that had to be rewritten (json_repair).
  const std::optional<std::string>& repaired_top_level_id() const { return repaired_id_; }

 private:
  simdjson::dom::parser& get();
  std::unique_ptr<simdjson::dom::parser> parser_;
  std::optional<std::string> repaired_id_;
};

// Parses `text` with `p`; when that fails, parses a copy with invalid UTF-8 replaced by U+FFFD
// (kept in `storage`), so a provider's stray byte costs a character, not a whole chunk.
// nullopt when it is not JSON either way.
std::optional<Element> parse_repairing_utf8(Parser& p, std::string_view text, std::string& storage);

// Compact JSON text of an element.
std::string to_text(Element e);

// Appends `e` pretty-printed (two spaces per level, keys in document order) at nesting `depth`.
void pretty(std::string& out, Element e, int depth = 0);

// Name of the element's JSON type, for error messages ("string", "object", ...).
std::string_view type_name(Element e);

// Small typed accessors: nullopt when the key is absent or null; DecodeError on a wrong type.
std::optional<std::string_view> get_string(Object o, std::string_view key);
std::optional<int64_t> get_int(Object o, std::string_view key);
std::optional<bool> get_bool(Object o, std::string_view key);
std::optional<Element> get(Object o, std::string_view key);

// Lenient accessors for what providers stream: nullopt when the key is absent, null or of
// another type (one odd field must not end a model stream).
std::optional<std::string_view> string_if(Object o, std::string_view key);
std::optional<int64_t> int_if(Object o, std::string_view key);
std::optional<Object> object_if(Object o, std::string_view key);

}  // namespace llmx::json
