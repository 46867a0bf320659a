#include "protocol/base/json_reader.hpp"

#include "protocol/base/json_repair.hpp"

#include "protocol/base/json_writer.hpp"
#include "protocol/base/thread_kept.hpp"

#include <fmt/format.h>

namespace llmx::json {

namespace {

// A parser that grew past kPooledCapacity (its buffers take about 15 bytes per byte of capacity)
// is freed instead of kept for a rare large document.
constexpr size_t kPooledCapacity = 64 * 1024;
using Idle = ThreadKept<Parser, std::unique_ptr<simdjson::dom::parser>, 8>;

std::unique_ptr<simdjson::dom::parser> borrow_parser() {
  auto p = Idle::take();
  return p ? std::move(p) : std::make_unique<simdjson::dom::parser>();
}

void return_parser(std::unique_ptr<simdjson::dom::parser> p) {
  if (p && p->capacity() <= kPooledCapacity) Idle::keep(std::move(p));
}

}  // namespace

Parser::Parser() : parser_(borrow_parser()) {}

Parser::~Parser() { return_parser(std::move(parser_)); }

Parser& Parser::operator=(Parser&& other) noexcept {
  if (this != &other) {
    return_parser(std::move(parser_));
    parser_ = std::move(other.parser_);
    repaired_id_ = std::move(other.repaired_id_);
  }
  return *this;
}

simdjson::dom::parser& Parser::get() {
  if (!parser_) parser_ = borrow_parser();  // moved from, then used again
  return *parser_;
}

Element Parser::parse(std::string_view text) {
  repaired_id_.reset();
  auto& parser = get();
  auto result = parser.parse(text.data(), text.size(), true);
  if (!result.error()) return result.value_unsafe();
  // The DOM keeps its own copy of the document, so the repaired text may go after parsing.
  if (auto fixed = repair_unrepresentable(text)) {
    auto again = parser.parse(fixed->text.data(), fixed->text.size(), true);
    if (!again.error()) {
      repaired_id_ = std::move(fixed->top_level_id);
      return again.value_unsafe();
    }
  }
  throw DecodeError(fmt::format("Parse error: {}", simdjson::error_message(result.error())));
}

std::optional<Element> parse_repairing_utf8(Parser& p, std::string_view text, std::string& storage) {
  try {
    return p.parse(text);
  } catch (const DecodeError&) {
  }
  storage = sanitize_utf8(text);
  if (storage == text) return std::nullopt;  // not an encoding problem
  try {
    return p.parse(storage);
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

std::string to_text(Element e) { return simdjson::minify(e); }

void pretty(std::string& out, json::Element e, int depth) {
  auto indent = [&](int d) { out.append(static_cast<size_t>(d) * 2, ' '); };
  if (e.is_object()) {
    auto obj = e.get_object().value_unsafe();
    if (obj.size() == 0) return out.append("{}"), void();
    out += "{\n";
    bool first = true;
    for (auto [k, v] : obj) {
      if (!first) out += ",\n";
      first = false;
      indent(depth + 1);
      append_escaped(out, k);
      out += ": ";
      pretty(out, v, depth + 1);
    }
    out += "\n";
    indent(depth);
    out += "}";
  } else if (e.is_array()) {
    auto arr = e.get_array().value_unsafe();
    if (arr.size() == 0) return out.append("[]"), void();
    out += "[\n";
    bool first = true;
    for (auto v : arr) {
      if (!first) out += ",\n";
      first = false;
      indent(depth + 1);
      pretty(out, v, depth + 1);
    }
    out += "\n";
    indent(depth);
    out += "]";
  } else {
    out += to_text(e);
  }
}


std::string_view type_name(Element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY: return "array";
    case simdjson::dom::element_type::OBJECT: return "object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64: return "integer";
    case simdjson::dom::element_type::DOUBLE: return "number";
    case simdjson::dom::element_type::STRING: return "string";
    case simdjson::dom::element_type::BOOL: return "boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "value";
}

std::optional<Element> get(Object o, std::string_view key) {
  auto r = o.at_key(key);
  if (r.error()) return std::nullopt;
  Element e = r.value_unsafe();
  if (e.is_null()) return std::nullopt;
  return e;
}

std::optional<std::string_view> string_if(Object o, std::string_view key) {
  auto e = get(o, key);
  if (!e || !e->is_string()) return std::nullopt;
  return std::string_view(e->get_string().value_unsafe());
}

std::optional<int64_t> int_if(Object o, std::string_view key) {
  auto e = get(o, key);
  if (!e || !e->is_int64()) return std::nullopt;
  return e->get_int64().value_unsafe();
}

std::optional<Object> object_if(Object o, std::string_view key) {
  auto e = get(o, key);
  if (!e || !e->is_object()) return std::nullopt;
  return e->get_object().value_unsafe();
}

std::optional<std::string_view> get_string(Object o, std::string_view key) {
  auto e = get(o, key);
  if (!e) return std::nullopt;
  if (!e->is_string())
    throw DecodeError(fmt::format("invalid type: expected string, got {}", type_name(*e)), std::string(key));
  return std::string_view(e->get_string().value_unsafe());
}

std::optional<int64_t> get_int(Object o, std::string_view key) {
  auto e = get(o, key);
  if (!e) return std::nullopt;
  if (!e->is_int64())
    throw DecodeError(fmt::format("invalid type: expected integer, got {}", type_name(*e)), std::string(key));
  return e->get_int64().value_unsafe();
}

std::optional<bool> get_bool(Object o, std::string_view key) {
  auto e = get(o, key);
  if (!e) return std::nullopt;
  if (!e->is_bool())
    throw DecodeError(fmt::format("invalid type: expected boolean, got {}", type_name(*e)), std::string(key));
  return e->get_bool().value_unsafe();
}

}  // namespace llmx::json
