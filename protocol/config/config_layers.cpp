// config_layers_json: the settings' layers as JSON for v2 config/read.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "protocol/base/files.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/config/config.hpp"
#include "protocol/config/config_reader.hpp"
#include "protocol/config/toml_guard.hpp"

namespace llmx {

namespace {

// A TOML value as JSON through our writer: toml++'s own JSON formatter writes code points it
// thinks unprintable as TOML's `\UXXXXXXXX` escapes, which JSON does not have, and copies
// invalid UTF-8 through (fuzz_config_toml found both). Dates and times are their TOML text, and
// infinities and NaN are strings, as JSON has neither.
void write_json(json::Writer& w, const toml::node& n) {
  if (const auto* t = n.as_table()) {
    w.begin_object();
    for (const auto& [k, v] : *t) {
      w.key(k.str());
      write_json(w, v);
    }
    w.end_object();
  } else if (const auto* a = n.as_array()) {
    w.begin_array();
    for (const auto& v : *a) write_json(w, v);
    w.end_array();
  } else if (const auto* s = n.as_string()) {
    w.string(s->get());
  } else if (const auto* i = n.as_integer()) {
    w.number(i->get());
  } else if (const auto* f = n.as_floating_point()) {
    double d = f->get();
    if (std::isfinite(d)) w.number(d);
    else w.string(std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
  } else if (const auto* b = n.as_boolean()) {
    w.boolean(b->get());
  } else {
    std::ostringstream text;
    if (const auto* d = n.as_date()) text << *d;
    else if (const auto* tm = n.as_time()) text << *tm;
    else if (const auto* dt = n.as_date_time()) text << *dt;
    w.string(text.str());
  }
}

// Compact JSON on one line, keys in the table's sorted order.
std::string json_of(const toml::table& t) {
  json::Writer w;
  write_json(w, t);
  return w.take();
}

// Everything `o` sets, as the table it would write over config.toml.
void apply_overrides(toml::table& t, const ConfigOverrides& o) {
  auto set = [&](std::string_view key, const std::optional<std::string>& v) {
    if (v) t.insert_or_assign(key, *v);
  };
  set("model", o.model);
  set("model_provider", o.model_provider);
  set("profile", o.profile);
  set("instructions", o.base_instructions);
  set("developer_instructions", o.developer_instructions);
  set("compact_prompt", o.compact_prompt);
  if (o.approval_policy) t.insert_or_assign("approval_policy", std::string(enum_name(*o.approval_policy)));
  if (o.sandbox_mode) t.insert_or_assign("sandbox_mode", std::string(enum_name(*o.sandbox_mode)));
  for (const auto& raw : o.cli_overrides) config_detail::apply_cli_override(t, raw);
  for (const auto& [key, value] : o.json_overrides) config_detail::apply_json_override(t, key, value);
}

}  // namespace

ConfigLayersJson config_layers_json(const ConfigOverrides& o) {
  ConfigLayersJson out;
  out.user_file = llmx_home() + "/config.toml";
  toml::table user;
  int error = 0;
  auto text = files::settings_cache().read(out.user_file, &error);
  if (!text && error != ENOENT && error != ENOTDIR)
    throw ConfigError(fmt::format("{}: invalid configuration: cannot be read ({})", out.user_file, std::strerror(error)));
  try {
    if (text) user = parse_toml(*text, out.user_file);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}: invalid configuration: {}", out.user_file, e.description()));
  }
  toml::table flags;
  apply_overrides(flags, o);
  toml::table merged = user;
  apply_overrides(merged, o);
  out.user = json_of(user);
  out.flags = json_of(flags);
  out.merged = json_of(merged);
  return out;
}

}  // namespace llmx
