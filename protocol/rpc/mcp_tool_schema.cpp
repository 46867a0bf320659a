#include "protocol/rpc/mcp_tool_schema.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"

namespace llmx::mcp {

namespace {

constexpr int kMaxDepth = 32;

struct Refused {
  std::string reason;
};

bool has(json::Object o, std::string_view key) { return json::get(o, key).has_value(); }

// The type a schema without a usable `type` most likely means.
std::string infer_type(json::Object o) {
  if (has(o, "properties") || has(o, "required") || has(o, "additionalProperties")) return "object";
  if (has(o, "items") || has(o, "prefixItems")) return "array";
  if (has(o, "enum") || has(o, "const") || has(o, "format")) return "string";
  for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
    if (has(o, k)) return "number";
  return "string";
}

class Converter {
 public:
  explicit Converter(json::Object root) : root_(root) {}

  void schema(json::Writer& w, json::Element e, int depth) {
    if (depth > kMaxDepth) throw Refused{"it nests deeper than 32 levels"};
    if (e.is_bool()) {  // `true`/`false` schemas: anything goes, as text
      w.begin_object().field("type", "string").end_object();
      return;
    }
    if (!e.is_object()) throw Refused{fmt::format("a schema is a {}, not an object", json::type_name(e))};
    auto o = e.get_object().value_unsafe();
    if (auto ref = json::get_string(o, "$ref")) return schema(w, resolve(*ref), depth + 1);
    // Unions take their first member that is itself usable.
    for (const char* k : {"anyOf", "oneOf", "allOf"}) {
      auto alts = json::get(o, k);
      if (alts && alts->is_array() && !has(o, "type") && !has(o, "properties")) {
        for (auto alt : json::Array(alts->get_array().value_unsafe())) {
          if (alt.is_object() && json::get_string(alt.get_object().value_unsafe(), "type") == std::string_view("null"))
            continue;
          return schema(w, alt, depth + 1);
        }
      }
    }
    std::string type = type_of(o);
    w.begin_object().field("type", type);
    if (auto d = json::get_string(o, "description")) w.field("description", *d);
    if (type == "array") {
      w.key("items");
      if (auto items = json::get(o, "items"); items && !items->is_array())
        schema(w, *items, depth + 1);
      else if (auto prefix = json::get(o, "prefixItems"); prefix && prefix->is_array() &&
                                                            prefix->get_array().value_unsafe().size() > 0)
        schema(w, prefix->get_array().value_unsafe().at(0).value_unsafe(), depth + 1);
      else
        w.begin_object().field("type", "string").end_object();
    } else if (type == "object") {
      object_body(w, o, depth);
    }
    w.end_object();
  }

 // The input schema itself: an object whatever it says of its type (checked by the caller).
  void top(json::Writer& w, json::Object o) {
    w.begin_object().field("type", "object");
    if (auto d = json::get_string(o, "description")) w.field("description", *d);
    object_body(w, o, 0);
    w.end_object();
  }

 private:
  // `type`, with `integer` as number and a type list taking its first supported member.
  std::string type_of(json::Object o) {
    auto supported = [](std::string_view t) {
      return t == "string" || t == "number" || t == "integer" || t == "boolean" || t == "array" || t == "object";
    };
    auto t = json::get(o, "type");
    std::string type;
    if (t && t->is_string() && supported(t->get_string().value_unsafe())) {
      type = std::string(t->get_string().value_unsafe());
    } else if (t && t->is_array()) {
      for (auto m : json::Array(t->get_array().value_unsafe()))
        if (m.is_string() && supported(m.get_string().value_unsafe())) {
          type = std::string(m.get_string().value_unsafe());
          break;
        }
    }
    if (type.empty()) type = infer_type(o);
    return type == "integer" ? "number" : type;
  }

  void object_body(json::Writer& w, json::Object o, int depth) {
    std::map<std::string, json::Element> props;  // sorted key order (§5.2)
    if (auto p = json::object_if(o, "properties"))
      for (auto [k, v] : *p) props.emplace(std::string(k), v);
    w.key("properties").begin_object();
    for (const auto& [k, v] : props) {
      w.key(k);
      schema(w, v, depth + 1);
    }
    w.end_object();
    if (auto req = json::get(o, "required"); req && req->is_array()) {
      w.key("required").begin_array();
      for (auto r : json::Array(req->get_array().value_unsafe()))
        if (r.is_string() && props.count(std::string(r.get_string().value_unsafe())))
          w.string(r.get_string().value_unsafe());
      w.end_array();
    }
    if (auto extra = json::get(o, "additionalProperties")) {
      w.key("additionalProperties");
      if (extra->is_bool())
        w.boolean(extra->get_bool().value_unsafe());
      else
        schema(w, *extra, depth + 1);
    }
  }

  // `#/$defs/x` or `#/definitions/x` within this schema; anything else is refused.
  json::Element resolve(std::string_view ref) {
    for (std::string_view prefix : {"#/$defs/", "#/definitions/"}) {
      if (!ref.starts_with(prefix)) continue;
      auto defs = json::object_if(root_, prefix.substr(2, prefix.size() - 3));
      if (!defs) break;
      if (auto target = json::get(*defs, ref.substr(prefix.size()))) {
        if (++refs_ > 256) throw Refused{"its $refs do not end"};
        return *target;
      }
      break;
    }
    throw Refused{fmt::format("it refers to `{}`, which it does not define", ref)};
  }

  json::Object root_;
  int refs_ = 0;
};

}  // namespace

std::variant<std::string, SchemaRefused> provider_schema(const RawJson& input_schema) {
  if (input_schema.text.size() > kMaxToolSchemaBytes)
    return SchemaRefused{fmt::format("its input schema has {} bytes (at most {})", input_schema.text.size(),
                                     kMaxToolSchemaBytes)};
  try {
    json::Parser parser;
    auto root = parser.parse(input_schema.text.empty() ? std::string_view("{}") : input_schema.text);
    if (!root.is_object()) return SchemaRefused{fmt::format("its input schema is a {}", json::type_name(root))};
    auto o = root.get_object().value_unsafe();
    // The arguments of a tool call are always an object; a schema that says otherwise is wrong.
    auto type = json::get_string(o, "type");
    if (type && *type != "object") return SchemaRefused{fmt::format("its input schema is a `{}`, not an object", *type)};
    json::Writer out;
    Converter c(o);
    c.top(out, o);
    return out.take();
  } catch (const Refused& r) {
    return SchemaRefused{r.reason};
  } catch (const json::DecodeError& e) {
    return SchemaRefused{fmt::format("its input schema is not JSON: {}", e.what())};
  }
}

}  // namespace llmx::mcp
