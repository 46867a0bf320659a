#include "protocol/config.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "protocol/json_reader.hpp"

namespace llmx {

namespace fs = std::filesystem;

std::string llmx_home() {
  if (const char* h = std::getenv("LLMX_HOME"); h && *h) return h;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.llmx";
}

namespace {

// Converts a JSON element into a TOML node (for the MCP `config` object).
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

// Returns the (trimmed) key path it set.
std::string apply_cli_override(toml::table& root, const std::string& raw) {
  auto eq = raw.find('=');
  if (eq == std::string::npos) throw ConfigError(fmt::format("Invalid override (missing '='): {}", raw));
  auto trim = [](std::string s) {
    auto b = s.find_first_not_of(" \t");
    auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  std::string key = trim(raw.substr(0, eq));
  std::string value = trim(raw.substr(eq + 1));
  if (key.empty()) throw ConfigError(fmt::format("Empty key in override: {}", raw));
  try {
    auto parsed = toml::parse("_x_ = " + value);
    if (auto* node = parsed.get("_x_")) {
      set_path(root, key, std::move(*node));
      return key;
    }
  } catch (const toml::parse_error&) {
  }
  // Not a TOML value: a literal string, surrounding quotes stripped.
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
    value = value.substr(1, value.size() - 2);
  set_path(root, key, toml::value<std::string>(value));
  return key;
}

template <class T>
std::optional<T> get_as(const toml::table& t, std::string_view key, const std::string& file) {
  auto* n = t.get(key);
  if (!n) return std::nullopt;
  if (auto v = n->value<T>()) return *v;
  throw ConfigError(fmt::format("{}: invalid type for `{}`", file, key));
}

template <class E>
std::optional<E> get_enum(const toml::table& t, std::string_view key, const std::string& file) {
  auto s = get_as<std::string>(t, key, file);
  if (!s) return std::nullopt;
  auto e = enum_from_name<E>(*s);
  if (!e) throw ConfigError(fmt::format("{}: unknown value `{}` for `{}`", file, *s, key));
  return e;
}

void apply_provider_table(ModelProviderInfo& p, const toml::table& t, const std::string& where) {
  if (auto v = get_as<std::string>(t, "name", where)) p.name = *v;
  if (auto v = get_as<std::string>(t, "base_url", where)) p.base_url = *v;
  if (auto v = get_as<std::string>(t, "env_key", where)) p.env_key = *v;
  if (auto v = get_as<std::string>(t, "env_key_instructions", where)) p.env_key_instructions = *v;
  if (auto v = get_as<std::string>(t, "experimental_bearer_token", where)) p.experimental_bearer_token = *v;
  if (auto v = get_enum<WireApi>(t, "wire_api", where)) p.wire_api = *v;
  if (auto v = get_as<int64_t>(t, "request_max_retries", where)) p.request_max_retries = std::min<int64_t>(*v, 100);
  if (auto v = get_as<int64_t>(t, "stream_max_retries", where)) p.stream_max_retries = std::min<int64_t>(*v, 100);
  if (auto v = get_as<int64_t>(t, "stream_idle_timeout_ms", where)) p.stream_idle_timeout_ms = *v;
  if (auto v = get_as<int64_t>(t, "max_tokens", where)) p.max_tokens = *v;
  if (auto v = get_as<bool>(t, "include_usage", where)) p.include_usage = *v;
  if (auto v = get_as<bool>(t, "prompt_cache", where)) p.prompt_cache = *v;
  auto read_map = [&](std::string_view key, std::map<std::string, std::string>& out) {
    if (auto* sub = t.get_as<toml::table>(key))
      for (auto& [k, v] : *sub)
        if (auto s = v.value<std::string>()) out[std::string(k.str())] = *s;
  };
  read_map("query_params", p.query_params);
  read_map("http_headers", p.http_headers);
  read_map("env_http_headers", p.env_http_headers);
}

}  // namespace

Config load_config(const ConfigOverrides& o) {
  Config cfg;
  cfg.llmx_home = llmx_home();
  std::string file = cfg.llmx_home + "/config.toml";
  toml::table root;
  std::error_code ec;
  if (fs::exists(file, ec)) {
    try {
      root = toml::parse_file(file);
    } catch (const toml::parse_error& err) {
      throw ConfigError(fmt::format("{}:{}:{}: {}", file, err.source().begin.line, err.source().begin.column,
                                    err.description()));
    }
  }
  // Keys set by `-c` / JSON overrides: they win over the profile's value for the same key.
  std::set<std::string, std::less<>> overridden;
  for (const auto& raw : o.cli_overrides) overridden.insert(apply_cli_override(root, raw));
  for (const auto& [key, value] : o.json_overrides) {
    json::Parser p;
    auto node = json_to_toml(p.parse(value.text));
    if (node) {
      set_path(root, key, std::move(*node));
      overridden.insert(key);
    }
  }

  // Profile values sit between the top level and the overrides for the keys a profile may set.
  std::optional<std::string> profile_name = o.profile;
  if (!profile_name) profile_name = get_as<std::string>(root, "profile", file);
  const toml::table* profile = nullptr;
  if (profile_name) {
    auto* profiles = root.get_as<toml::table>("profiles");
    profile = profiles ? profiles->get_as<toml::table>(*profile_name) : nullptr;
    if (!profile) throw ConfigError(fmt::format("{}: config profile `{}` not found", file, *profile_name));
  }
  auto pick = [&]<class T>(std::string_view key) -> std::optional<T> {
    if (profile && !overridden.count(key))
      if (auto v = get_as<T>(*profile, key, file + " [profiles." + *profile_name + "]")) return v;
    return get_as<T>(root, key, file);
  };

  if (auto v = pick.operator()<std::string>("model")) cfg.model = *v;
  if (o.model) cfg.model = *o.model;

  auto providers = builtin_providers();
  if (auto* user = root.get_as<toml::table>("model_providers")) {
    for (auto& [k, v] : *user) {
      std::string id(k.str());
      auto* t = v.as_table();
      if (!t) throw ConfigError(fmt::format("{}: `model_providers.{}` must be a table", file, id));
      auto& p = providers[id];
      bool is_new = p.id.empty();
      p.id = id;
      if (is_new && !t->get("name"))
        throw ConfigError(fmt::format("{}: missing field `name` in `model_providers.{}`", file, id));
      apply_provider_table(p, *t, fmt::format("{} [model_providers.{}]", file, id));
    }
  }
  std::string provider_id = "litellm";
  if (auto v = pick.operator()<std::string>("model_provider")) provider_id = *v;
  if (o.model_provider) provider_id = *o.model_provider;
  auto it = providers.find(provider_id);
  if (it == providers.end()) throw ConfigError(fmt::format("Model provider `{}` not found", provider_id));
  cfg.provider = it->second;

  if (auto v = pick.operator()<std::string>("approval_policy")) {
    auto e = enum_from_name<AskForApproval>(*v);
    if (!e) throw ConfigError(fmt::format("{}: unknown value `{}` for `approval_policy`", file, *v));
    cfg.approval_policy = *e;
  }
  if (o.approval_policy) cfg.approval_policy = *o.approval_policy;
  if (auto v = pick.operator()<std::string>("sandbox_mode")) {
    auto e = enum_from_name<SandboxMode>(*v);
    if (!e) throw ConfigError(fmt::format("{}: unknown value `{}` for `sandbox_mode`", file, *v));
    cfg.sandbox_policy.mode = *e;
  }
  if (o.sandbox_mode) cfg.sandbox_policy.mode = *o.sandbox_mode;
  if (auto* sww = root.get_as<toml::table>("sandbox_workspace_write")) {
    std::string where = file + " [sandbox_workspace_write]";
    if (auto* roots = sww->get_as<toml::array>("writable_roots"))
      for (auto& r : *roots)
        if (auto s = r.value<std::string>()) cfg.sandbox_policy.writable_roots.push_back(*s);
    if (auto v = get_as<bool>(*sww, "network_access", where)) cfg.sandbox_policy.network_access = *v;
    if (auto v = get_as<bool>(*sww, "exclude_tmpdir_env_var", where)) cfg.sandbox_policy.exclude_tmpdir_env_var = *v;
    if (auto v = get_as<bool>(*sww, "exclude_slash_tmp", where)) cfg.sandbox_policy.exclude_slash_tmp = *v;
    if (auto v = get_as<bool>(*sww, "allow_git_writes", where)) cfg.allow_git_writes = *v;
  }
  if (auto v = get_as<std::string>(root, "sandbox_fallback", file)) {
    if (*v != "refuse" && *v != "unsandboxed-with-approval")
      throw ConfigError(fmt::format("{}: unknown value `{}` for `sandbox_fallback`, expected `refuse` or "
                                    "`unsandboxed-with-approval`",
                                    file, *v));
    cfg.sandbox_fallback = *v;
  }
  if (auto* sep = root.get_as<toml::table>("shell_environment_policy")) {
    std::string where = file + " [shell_environment_policy]";
    auto& e = cfg.shell_environment_policy;
    if (auto v = get_as<std::string>(*sep, "inherit", where)) {
      if (*v != "all" && *v != "core" && *v != "none")
        throw ConfigError(fmt::format("{}: unknown value `{}` for `inherit`, expected `all`, `core` or `none`", where, *v));
      e.inherit = *v;
    }
    if (auto v = get_as<bool>(*sep, "ignore_default_excludes", where)) e.ignore_default_excludes = *v;
    auto strings = [&](std::string_view key, std::vector<std::string>& out) {
      if (auto* arr = sep->get_as<toml::array>(key))
        for (auto& item : *arr)
          if (auto str = item.value<std::string>()) out.push_back(*str);
    };
    strings("exclude", e.exclude);
    strings("include_only", e.include_only);
    if (auto* set = sep->get_as<toml::table>("set"))
      for (auto& [k, v] : *set)
        if (auto str = v.value<std::string>()) e.set[std::string(k.str())] = *str;
  }
  if (auto v = pick.operator()<std::string>("model_reasoning_effort")) cfg.reasoning_effort = *v;
  if (auto v = pick.operator()<std::string>("model_reasoning_summary")) cfg.reasoning_summary = *v;
  if (auto v = get_as<int64_t>(root, "model_context_window", file)) cfg.model_context_window = *v;
  if (auto v = get_as<int64_t>(root, "approval_timeout", file)) cfg.approval_timeout_ms = *v * 1000;
  if (auto v = get_as<std::string>(root, "developer_instructions", file)) cfg.developer_instructions = *v;
  if (auto v = get_as<std::string>(root, "compact_prompt", file)) cfg.compact_prompt = *v;
  if (o.base_instructions) cfg.base_instructions = *o.base_instructions;
  if (o.developer_instructions) cfg.developer_instructions = *o.developer_instructions;
  if (o.compact_prompt) cfg.compact_prompt = *o.compact_prompt;

  std::string cwd = o.cwd.value_or(fs::current_path(ec).string());
  fs::path p(cwd);
  if (p.is_relative()) p = fs::current_path(ec) / p;
  cfg.cwd = fs::weakly_canonical(p, ec).string();
  if (cfg.cwd.empty()) cfg.cwd = p.lexically_normal().string();
  return cfg;
}

}  // namespace llmx
