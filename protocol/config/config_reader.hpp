// Internal to the config loader: typed, position-aware reads from a toml++ tree. Every value
// carries the place it came from (config.toml with line and column, or the `-c` override / JSON
// override that set it), so a bad value is reported where the user wrote it.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/config/config.hpp"

namespace llmx::config_detail {

// `key` as written in a dotted path: bare when it can be, else a quoted string.
std::string key_part(std::string_view key);

// The file being read, where messages go, and which key paths the overrides replaced.
class Ctx {
 public:
  Ctx(std::string file, std::vector<std::string>& warnings) : file_(std::move(file)), warnings_(warnings) {}

  const std::string& file() const { return file_; }
  // `file:line:col` for values from config.toml, the override's own label otherwise.
  std::string where(const toml::source_region& r) const;
  // `file:line` (warnings point at the line).
  std::string where_line(const toml::source_region& r) const;
  [[noreturn]] void fail(const toml::node& at, const std::string& message) const;
  void warn(const toml::source_region& r, const std::string& message) const;

  // Key paths set by `-c` or JSON overrides; they beat the profile for the same key.
  void mark_overridden(std::string path) { overridden_.insert(std::move(path)); }
  // True when `path` or one of its parent tables was set by an override.
  bool overridden(std::string_view path) const;

 private:
  std::string file_;
  std::vector<std::string>& warnings_;
  std::set<std::string, std::less<>> overridden_;
};

// A table plus its dotted path ("" for the root), with checked getters. Getters return nullopt
// when the key is absent and throw ConfigError when it has the wrong type or value.
class Section {
 public:
  Section(const Ctx& ctx, const toml::table& table, std::string prefix = {})
      : ctx_(&ctx), table_(&table), prefix_(std::move(prefix)) {}

  const Ctx& ctx() const { return *ctx_; }
  const toml::table& table() const { return *table_; }
  // Full dotted path of a key of this table.
  std::string path(std::string_view key) const { return prefix_ + key_part(key); }
  const toml::node* get(std::string_view key) const { return table_->get(key); }

  std::optional<std::string> string(std::string_view key) const;
  std::optional<int64_t> integer(std::string_view key, int64_t min = INT64_MIN) const;
  std::optional<double> number(std::string_view key) const;  // float or integer
  std::optional<bool> boolean(std::string_view key) const;
  // A string that must be one of `allowed`.
  std::optional<std::string> one_of(std::string_view key, std::initializer_list<std::string_view> allowed) const;
  std::optional<std::vector<std::string>> strings(std::string_view key) const;
  std::optional<std::map<std::string, std::string>> string_map(std::string_view key) const;
  std::optional<Section> table(std::string_view key) const;
  // Warns about every key not in `known`: "unknown <noun> `path` (ignored)".
  void check_keys(std::initializer_list<std::string_view> known, std::string_view noun = "key") const;
  // `file:line:col` of a key's value (for messages about values that parsed but are unusable).
  std::string where(std::string_view key) const;

  [[noreturn]] void type_error(std::string_view key, const toml::node& n, std::string_view expected) const;

 private:
  const Ctx* ctx_;
  const toml::table* table_;
  std::string prefix_;
};

// "a string", "an integer", ... for messages.
std::string_view type_phrase(const toml::node& n);

// Applies one `-c key=value` (engine.md §4.2) to `root`; returns the trimmed key path.
std::string apply_cli_override(toml::table& root, const std::string& raw);
// Applies one JSON override (null is ignored); returns false when nothing was set.
bool apply_json_override(toml::table& root, const std::string& key, const RawJson& value);

// Section parsers (config_sections.cpp).
ModelProviderInfo& apply_provider_table(std::map<std::string, ModelProviderInfo>& providers, const Section& t,
                                        const std::string& id);
void read_sandbox_workspace_write(const Section& t, Config& cfg);
void read_shell_environment_policy(const Section& t, ShellEnvironmentConfig& out);
void read_history(const Section& t, HistoryConfig& out);
void read_cluster(const Section& t, ClusterConfig& out);
void read_ui_tables(const Section& root);  // tui, notice, otel: type-checked, not kept
McpServerConfig read_mcp_server(const Section& t, const std::string& name);
// Whether cwd (or its git repository, or a worktree's main repository) is trusted in
// [projects."<path>"].
bool project_is_trusted(const Section& root, const std::string& cwd);

// Feature toggles in the order they apply (config_features.cpp).
struct FeatureStep {
  std::string feature;  // canonical name
  bool value = false;
  std::string path;  // the key that set it, for override precedence
};
// Legacy keys of the top level (is_profile = false) or of a profile, then its [features] table.
std::vector<FeatureStep> legacy_feature_steps(const Section& t, bool is_profile);
std::vector<FeatureStep> feature_table_steps(const Section& t);
void apply_feature(Features& f, const std::string& feature, bool value);

}  // namespace llmx::config_detail
