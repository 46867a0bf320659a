#include "protocol/config/config_reader.hpp"

#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/text.hpp"
#include "protocol/config/toml_guard.hpp"

namespace llmx::config_detail {

namespace {

std::string trim(std::string_view s) { return text::trim(s, " \t"); }

// Where a key/value pair was written: the key's own position, else its value's, else (for
// tables an override created) the first child that knows.
toml::source_region region_of(const toml::key& k, const toml::node& n) {
  if (k.source().begin) return k.source();
  if (n.source().begin) return n.source();
  if (auto* t = n.as_table())
    for (auto&& [ck, cv] : *t)
      if (auto r = region_of(ck, cv); r.begin) return r;
  if (auto* a = n.as_array())
    for (auto& e : *a)
      if (e.source().begin) return e.source();
  return n.source();
}

// Sets a dotted key path in a table, creating (or replacing non-table) intermediates.
void set_path(toml::table& root, std::string_view path, toml::node&& value) {
  toml::table* t = &root;
  while (true) {
    auto dot = path.find('.');
    std::string key(path.substr(0, dot));
    if (dot == std::string_view::npos) {
      t->insert_or_assign(key, std::move(value));
      return;
    }
    auto* existing = t->get(key);
    if (!existing || !existing->is_table()) {
      t->insert_or_assign(key, toml::table{});
      existing = t->get(key);
    }
    t = existing->as_table();
    path.remove_prefix(dot + 1);
  }
}

// Parses `_x_ = <value>` with `label` as the source name, so errors about the value name the
// override it came from.
std::optional<toml::table> parse_labelled(const std::string& value_text, const std::string& label) {
  try {
    return parse_toml("_x_ = " + value_text, label);
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

// Converts a JSON element into a TOML node (for the MCP `config` object); null gives nullptr.
std::unique_ptr<toml::node> json_to_toml(json::Element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::STRING: return std::make_unique<toml::value<std::string>>(std::string(e.get_string().value_unsafe()));
    case T::INT64: return std::make_unique<toml::value<int64_t>>(e.get_int64().value_unsafe());
    case T::UINT64: return std::make_unique<toml::value<int64_t>>(static_cast<int64_t>(e.get_uint64().value_unsafe()));
    case T::DOUBLE: return std::make_unique<toml::value<double>>(e.get_double().value_unsafe());
    case T::BOOL: return std::make_unique<toml::value<bool>>(e.get_bool().value_unsafe());
    case T::ARRAY: {
      auto arr = std::make_unique<toml::array>();
      for (auto items = e.get_array().value_unsafe(); auto item : items)
        if (auto n = json_to_toml(item)) arr->push_back(std::move(*n));
      return arr;
    }
    case T::OBJECT: {
      auto tbl = std::make_unique<toml::table>();
      for (auto obj = e.get_object().value_unsafe(); auto [k, v] : obj)
        if (auto n = json_to_toml(v)) tbl->insert_or_assign(std::string(k), std::move(*n));
      return tbl;
    }
    case T::NULL_VALUE: return nullptr;
  }
  return nullptr;
}

std::string backquoted_list(std::initializer_list<std::string_view> items) {
  std::string out;
  size_t i = 0;
  for (auto item : items) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += fmt::format("`{}`", item);
    ++i;
  }
  return out;
}

}  // namespace

std::string key_part(std::string_view key) {
  bool bare = !key.empty();
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) bare = false;
  if (bare) return std::string(key);
  std::string out = "\"";
  for (char c : key) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string_view type_phrase(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

// --- Ctx ----------------------------------------------------------------------------------------

std::string Ctx::where(const toml::source_region& r) const {
  if (!r.path) return file_;
  if (*r.path != file_) return *r.path;
  return fmt::format("{}:{}:{}", file_, r.begin.line, r.begin.column);
}

std::string Ctx::where_line(const toml::source_region& r) const {
  if (!r.path) return file_;
  if (*r.path != file_) return *r.path;
  return fmt::format("{}:{}", file_, r.begin.line);
}

void Ctx::fail(const toml::node& at, const std::string& message) const {
  throw ConfigError(fmt::format("{}: {}", where(at.source()), message));
}

void Ctx::warn(const toml::source_region& r, const std::string& message) const {
  warnings_.push_back(fmt::format("{}: {}", where_line(r), message));
}

bool Ctx::overridden(std::string_view path) const {
  for (const auto& o : overridden_)
    if (path == o || (path.size() > o.size() && path.starts_with(o) && path[o.size()] == '.')) return true;
  return false;
}

// --- Section ------------------------------------------------------------------------------------

void Section::type_error(std::string_view key, const toml::node& n, std::string_view expected) const {
  ctx_->fail(n, fmt::format("invalid type for `{}`: expected {}, got {}", path(key), expected, type_phrase(n)));
}

std::string Section::where(std::string_view key) const {
  auto* n = get(key);
  return n ? ctx_->where(n->source()) : ctx_->file();
}

std::optional<std::string> Section::string(std::string_view key) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) type_error(key, *n, "a string");
  return n->as_string()->get();
}

std::optional<int64_t> Section::integer(std::string_view key, int64_t min) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_integer()) type_error(key, *n, "an integer");
  int64_t v = n->as_integer()->get();
  if (v < min)
    ctx_->fail(*n,
               fmt::format("invalid value for `{}`: expected an integer of at least {}, got {}", path(key), min, v));
  return v;
}

std::optional<double> Section::number(std::string_view key) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
  if (!n->is_floating_point()) type_error(key, *n, "a number");
  return n->as_floating_point()->get();
}

std::optional<bool> Section::boolean(std::string_view key) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) type_error(key, *n, "a boolean");
  return n->as_boolean()->get();
}

std::optional<std::string> Section::one_of(std::string_view key,
                                           std::initializer_list<std::string_view> allowed) const {
  auto v = string(key);
  if (!v) return v;
  for (auto a : allowed)
    if (*v == a) return v;
  ctx_->fail(*get(key),
             fmt::format("unknown value `{}` for `{}`: expected {}", *v, path(key), backquoted_list(allowed)));
}

std::optional<std::vector<std::string>> Section::strings(std::string_view key) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  auto* arr = n->as_array();
  if (!arr) type_error(key, *n, "an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < arr->size(); ++i) {
    auto& item = (*arr)[i];
    if (!item.is_string())
      ctx_->fail(item,
                 fmt::format("invalid type for `{}[{}]`: expected a string, got {}", path(key), i, type_phrase(item)));
    out.push_back(item.as_string()->get());
  }
  return out;
}

std::optional<std::map<std::string, std::string>> Section::string_map(std::string_view key) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  auto* t = n->as_table();
  if (!t) type_error(key, *n, "a table of strings");
  std::map<std::string, std::string> out;
  for (auto&& [k, v] : *t) {
    if (!v.is_string())
      ctx_->fail(v, fmt::format("invalid type for `{}.{}`: expected a string, got {}", path(key), key_part(k.str()),
                                type_phrase(v)));
    out[std::string(k.str())] = v.as_string()->get();
  }
  return out;
}

std::optional<Section> Section::table(std::string_view key) const {
  auto* n = get(key);
  if (!n) return std::nullopt;
  auto* t = n->as_table();
  if (!t) type_error(key, *n, "a table");
  return Section(*ctx_, *t, path(key) + ".");
}

void Section::check_keys(std::initializer_list<std::string_view> known, std::string_view noun) const {
  for (auto&& [k, v] : *table_) {
    bool ok = false;
    for (auto name : known) ok = ok || k.str() == name;
    if (!ok) ctx_->warn(region_of(k, v), fmt::format("unknown {} `{}` (ignored)", noun, path(k.str())));
  }
}

// --- overrides ----------------------------------------------------------------------------------

std::string apply_cli_override(toml::table& root, const std::string& raw) {
  auto eq = raw.find('=');
  if (eq == std::string::npos) throw ConfigError(fmt::format("Invalid override (missing '='): {}", raw));
  std::string key = trim(std::string_view(raw).substr(0, eq));
  std::string value = trim(std::string_view(raw).substr(eq + 1));
  if (key.empty()) throw ConfigError(fmt::format("Empty key in override: {}", raw));
  std::string label = "-c " + raw;
  auto parsed = parse_labelled(value, label);
  if (!parsed) {
    // Not a TOML value: a literal string, surrounding quotes stripped. It is re-parsed as a TOML
    // string so it too carries the override as its source.
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    std::ostringstream quoted;
    quoted << toml::value<std::string>(value);
    parsed = parse_labelled(quoted.str(), label);
  }
  auto* node = parsed ? parsed->get("_x_") : nullptr;
  if (!node) throw ConfigError(fmt::format("{}: not a TOML value", label));
  set_path(root, key, std::move(*node));
  return key;
}

bool apply_json_override(toml::table& root, const std::string& key, const RawJson& value) {
  json::Parser p;
  auto node = json_to_toml(p.parse(value.text));
  if (!node) return false;
  // Round-trip through TOML text so the value carries a source naming this override.
  toml::table wrapper;
  wrapper.insert_or_assign("_x_", std::move(*node));
  std::ostringstream text;
  text << toml::toml_formatter(wrapper);
  std::string label = fmt::format("config override `{}`", key);
  toml::table parsed;
  try {
    parsed = parse_toml(text.str(), label);
  } catch (const toml::parse_error& err) {
    throw ConfigError(fmt::format("{}: {}", label, err.description()));
  }
  auto* n = parsed.get("_x_");
  if (!n) return false;
  set_path(root, key, std::move(*n));
  return true;
}

}  // namespace llmx::config_detail
