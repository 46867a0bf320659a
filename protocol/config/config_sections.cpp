// Readers for the sub-tables of config.toml: providers, sandbox, shell environment, history, UI
// tables, MCP servers and project trust.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "protocol/config/config_reader.hpp"
#include "protocol/config/project_doc.hpp"

namespace llmx::config_detail {

namespace fs = std::filesystem;

ModelProviderInfo& apply_provider_table(std::map<std::string, ModelProviderInfo>& providers, const Section& t,
                                        const std::string& id) {
  t.check_keys({"name", "base_url", "env_key", "env_key_instructions", "experimental_bearer_token", "wire_api",
                "query_params", "http_headers", "env_http_headers", "request_max_retries", "stream_max_retries",
                "stream_idle_timeout_ms", "max_tokens", "requires_openai_auth", "include_usage", "prompt_cache",
                "reasoning_passback", "models_cache_ttl_secs", "model_info"});
  // Built-ins may be changed field by field (E7); a new id needs a name.
  auto name = t.string("name");
  if (!providers.count(id) && !name)
    throw ConfigError(fmt::format("{}: missing field `name` in `model_providers.{}`", t.ctx().where(t.table().source()),
                                  key_part(id)));
  bool known = providers.count(id) > 0;
  auto& p = providers[id];
  p.id = id;
  // A provider llmx does not know may speak either wire: Responses first, Chat if it refuses.
  if (!known) p.wire_api = WireApi::automatic;
  if (name) p.name = *name;
  if (auto v = t.string("base_url")) p.base_url = *v;
  if (auto v = t.string("env_key")) p.env_key = *v;
  if (auto v = t.string("env_key_instructions")) p.env_key_instructions = *v;
  if (auto v = t.string("experimental_bearer_token")) p.experimental_bearer_token = *v;
  if (auto v = t.one_of("wire_api", {"chat", "responses", "auto"})) p.wire_api = *enum_from_name<WireApi>(*v);
  if (auto v = t.integer("request_max_retries", 0)) p.request_max_retries = std::min<int64_t>(*v, 100);
  if (auto v = t.integer("stream_max_retries", 0)) p.stream_max_retries = std::min<int64_t>(*v, 100);
  if (auto v = t.integer("stream_idle_timeout_ms", 0)) p.stream_idle_timeout_ms = *v;
  if (auto v = t.integer("max_tokens", 1)) p.max_tokens = *v;
  (void)t.boolean("requires_openai_auth");  // a login-flow hint for UIs
  if (auto v = t.boolean("include_usage")) p.include_usage = *v;
  if (auto v = t.integer("models_cache_ttl_secs", 0)) p.models_cache_ttl_secs = *v;
  if (auto v = t.boolean("model_info")) p.model_info = *v;
  if (auto v = t.boolean("prompt_cache")) p.prompt_cache = *v;
  if (auto v = t.one_of("reasoning_passback", {"none", "reasoning_content", "thinking_blocks", "reasoning"}))
    p.reasoning_passback = *enum_from_name<ReasoningPassback>(*v);
  if (auto v = t.string_map("query_params")) p.query_params = *v;
  if (auto v = t.string_map("http_headers")) p.http_headers = *v;
  if (auto v = t.string_map("env_http_headers")) p.env_http_headers = *v;
  return p;
}

void read_sandbox_workspace_write(const Section& t, Config& cfg) {
  t.check_keys({"writable_roots", "network_access", "exclude_tmpdir_env_var", "exclude_slash_tmp", "allow_git_writes"});
  auto& sp = cfg.sandbox_policy;
  if (auto v = t.strings("writable_roots")) sp.writable_roots = *v;
  if (auto v = t.boolean("network_access")) sp.network_access = *v;
  if (auto v = t.boolean("exclude_tmpdir_env_var")) sp.exclude_tmpdir_env_var = *v;
  if (auto v = t.boolean("exclude_slash_tmp")) sp.exclude_slash_tmp = *v;
  if (auto v = t.boolean("allow_git_writes")) cfg.allow_git_writes = *v;
}

void read_shell_environment_policy(const Section& t, ShellEnvironmentConfig& e) {
  t.check_keys({"inherit", "ignore_default_excludes", "exclude", "set", "include_only", "experimental_use_profile"});
  if (auto v = t.one_of("inherit", {"all", "core", "none"})) e.inherit = *v;
  if (auto v = t.boolean("ignore_default_excludes")) e.ignore_default_excludes = *v;
  if (auto v = t.strings("exclude")) e.exclude = *v;
  if (auto v = t.strings("include_only")) e.include_only = *v;
  if (auto v = t.string_map("set")) e.set = *v;
  (void)t.boolean("experimental_use_profile");  // unused, as in the reference
}

void read_history(const Section& t, HistoryConfig& h) {
  t.check_keys({"persistence", "max_bytes"});
  if (auto v = t.one_of("persistence", {"save-all", "none"})) h.persistence = *v;
  if (auto v = t.integer("max_bytes", 0)) h.max_bytes = *v;
}

void read_cluster(const Section& t, ClusterConfig& c) {
  t.check_keys({"nodes", "cert", "key", "cafile"});
  if (auto v = t.strings("nodes")) c.nodes = *v;
  if (auto v = t.string("cert")) c.cert = *v;
  if (auto v = t.string("key")) c.key = *v;
  if (auto v = t.string("cafile")) c.cafile = *v;
}

void read_ui_tables(const Section& root) {
  // Terminal-UI settings: checked where the reference has a type, otherwise accepted as they are.
  if (auto tui = root.table("tui")) {
    if (auto* n = tui->get("notifications"); n && !n->is_boolean()) {
      if (!n->is_array()) tui->type_error("notifications", *n, "a boolean or an array of strings");
      (void)tui->strings("notifications");
    }
  }
  (void)root.table("notice");
  if (auto otel = root.table("otel")) {
    (void)otel->string("environment");
    (void)otel->boolean("log_user_prompt");
    if (auto* n = otel->get("exporter"); n && !n->is_string() && !n->is_table())
      otel->type_error("exporter", *n, "a string or a table");
  }
}

McpServerConfig read_mcp_server(const Section& t, const std::string& name) {
  std::string label = "mcp_servers." + key_part(name);
  t.check_keys({"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers",
                "env_http_headers", "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "enabled",
                "enabled_tools", "disabled_tools", "bearer_token"});
  auto invalid = [&](std::string_view key, const std::string& why) -> void {
    auto* n = t.get(key);
    throw ConfigError(fmt::format("{}: invalid `{}`: {}",
                                  n ? t.ctx().where(n->source()) : t.ctx().where(t.table().source()), label, why));
  };
  if (t.get("bearer_token"))
    throw ConfigError(fmt::format("{}: {} uses unsupported `bearer_token`; set `bearer_token_env_var`.",
                                  t.where("bearer_token"), label));
  McpServerConfig s;
  s.command = t.string("command");
  s.url = t.string("url");
  if (s.command) {
    for (auto key : {"url", "bearer_token_env_var", "http_headers", "env_http_headers"})
      if (t.get(key)) invalid(key, fmt::format("{} is not supported for stdio", key));
    if (auto v = t.strings("args")) s.args = *v;
    if (auto v = t.string_map("env")) s.env = *v;
    if (auto v = t.strings("env_vars")) s.env_vars = *v;
    s.cwd = t.string("cwd");
  } else if (s.url) {
    for (auto key : {"args", "env", "env_vars", "cwd"})
      if (t.get(key)) invalid(key, fmt::format("{} is not supported for streamable_http", key));
    s.bearer_token_env_var = t.string("bearer_token_env_var");
    if (auto v = t.string_map("http_headers")) s.http_headers = *v;
    if (auto v = t.string_map("env_http_headers")) s.env_http_headers = *v;
  } else {
    invalid("", "invalid transport (set `command` for stdio or `url` for streamable HTTP)");
  }
  // `_sec` wins when both are given.
  if (auto ms = t.integer("startup_timeout_ms", 0)) s.startup_timeout_sec = static_cast<double>(*ms) / 1000.0;
  if (auto sec = t.number("startup_timeout_sec")) s.startup_timeout_sec = *sec;
  s.tool_timeout_sec = t.number("tool_timeout_sec");
  for (auto key : {"startup_timeout_sec", "tool_timeout_sec"})
    if (auto v = t.number(key); v && *v < 0) invalid(key, fmt::format("`{}` must not be negative", key));
  if (auto v = t.boolean("enabled")) s.enabled = *v;
  s.enabled_tools = t.strings("enabled_tools");
  s.disabled_tools = t.strings("disabled_tools");
  return s;
}

bool project_is_trusted(const Section& root, const std::string& cwd) {
  auto projects = root.table("projects");
  if (!projects) return false;
  std::vector<std::string> trusted;
  for (auto&& [k, v] : projects->table()) {
    std::string key(k.str());
    auto entry = projects->table(key);  // type-checks: each project is a table
    entry->check_keys({"trust_level"});
    if (entry->string("trust_level") == std::optional<std::string>("trusted")) {
      std::error_code ec;
      auto canon = fs::weakly_canonical(key, ec);
      trusted.push_back(ec ? key : canon.string());
    }
  }
  if (trusted.empty()) return false;
  auto is_trusted = [&](const std::string& dir) {
    return std::find(trusted.begin(), trusted.end(), dir) != trusted.end();
  };
  if (is_trusted(cwd)) return true;
  auto git_root = project_doc::find_git_root(cwd);
  if (!git_root) return false;
  if (is_trusted(*git_root)) return true;
  // A linked worktree inherits the trust of its main repository.
  auto main_root = project_doc::main_repository_root(*git_root);
  return main_root && is_trusted(*main_root);
}

}  // namespace llmx::config_detail
