// Reading JSON with simdjson's DOM, plus the error type every decoder throws. The message of a
// DecodeError names the offending field so it can go straight into a JSON-RPC -32602 reply.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace llmx::json {

using Element = simdjson::dom::element;
using Object = simdjson::dom::object;

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A parser that can be reused for many documents; the element returned by parse() stays valid
// until the next parse() on the same Parser.
class Parser {
 public:
  // Throws DecodeError("Parse error: ...") on malformed JSON.
  Element parse(std::string_view text);

 private:
  simdjson::dom::parser parser_;
};

// Compact JSON text of an element.
std::string to_text(Element e);

// Name of the element's JSON type, for error messages ("string", "object", ...).
std::string_view type_name(Element e);

// Small typed accessors: nullopt when the key is absent or null; DecodeError on a wrong type.
std::optional<std::string_view> get_string(Object o, std::string_view key);
std::optional<int64_t> get_int(Object o, std::string_view key);
std::optional<bool> get_bool(Object o, std::string_view key);
std::optional<Element> get(Object o, std::string_view key);

}  // namespace llmx::json
