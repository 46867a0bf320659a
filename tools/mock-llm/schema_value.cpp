#include "tools/mock-llm/schema_value.hpp"

#include "tools/mock-llm/text_util.hpp"

namespace mockllm {

namespace {

std::string value(simdjson::dom::element s, int depth) {
  if (depth > 32 || !s.is_object()) return "null";
  simdjson::dom::element e;
  if (s["const"].get(e) == simdjson::SUCCESS) return simdjson::minify(e);
  simdjson::dom::array arr;
  if (s["enum"].get_array().get(arr) == simdjson::SUCCESS)
    for (simdjson::dom::element first : arr) return simdjson::minify(first);
  for (const char *key : {"anyOf", "oneOf", "allOf"})
    if (s[key].get_array().get(arr) == simdjson::SUCCESS)
      for (simdjson::dom::element first : arr) return value(first, depth + 1);
  std::string_view type;
  if (s["type"].get_string().get(type) != simdjson::SUCCESS) {
    if (s["type"].get_array().get(arr) == simdjson::SUCCESS) {  // ["string","null"]: the first
      for (simdjson::dom::element t : arr)
        if (t.get_string().get(type) == simdjson::SUCCESS) break;
    } else if (s["properties"].get(e) == simdjson::SUCCESS) {
      type = "object";
    }
  }
  if (type == "object") {
    std::string out = "{";
    simdjson::dom::object props;
    if (s["properties"].get_object().get(props) == simdjson::SUCCESS) {
      bool first = true;
      for (auto [key, sub] : props) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, key);
        out += ':' + value(sub, depth + 1);
      }
    }
    return out + "}";
  }
  if (type == "array") {
    simdjson::dom::element items;
    return s["items"].get(items) == simdjson::SUCCESS ? "[" + value(items, depth + 1) + "]" : "[]";
  }
  if (type == "string") return "\"mock\"";
  if (type == "integer" || type == "number") return "1";
  if (type == "boolean") return "true";
  return "null";
}

}  // namespace

std::string value_for_schema(simdjson::dom::element schema) { return value(schema, 0); }

} // namespace mockllm
