// config_layers_json: the settings' layers as JSON for v2 config/read.
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/config/config.hpp"
#include "protocol/config/config_reader.hpp"

namespace llmx {

namespace {

// Compact JSON on one line (toml++ writes one value per line), keys in the table's sorted order.
std::string json_of(const toml::table& t) {
  std::ostringstream s;
  s << toml::json_formatter(t, toml::format_flags::quote_dates_and_times | toml::format_flags::quote_infinities_and_nans);
  json::Parser p;
  return json::to_text(p.parse(s.str()));
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
  try {
    user = toml::parse_file(out.user_file);
  } catch (const toml::parse_error& e) {
    std::error_code ec;
    if (std::filesystem::exists(out.user_file, ec))
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
