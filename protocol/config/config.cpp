// load_config: config.toml, then `-c` and JSON overrides on its tree, then the profile, then
// typed overrides (engine.md §4.1, §4.4). Where a profile and an override set the same key, the
// override wins (llmx's order: defaults < config.toml < profile < -c < typed).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "protocol/base/files.hpp"
#include "protocol/config/auth.hpp"
#include "protocol/config/config_reader.hpp"
#include "protocol/config/project_doc.hpp"
#include "protocol/config/toml_guard.hpp"
#include "protocol/base/text.hpp"

namespace llmx {

namespace fs = std::filesystem;
using namespace config_detail;

namespace {

// A path-valued key (instructions files), kept with its position for later messages.
struct PathSetting {
  std::string path;
  std::string where;
};

// The keys a profile may set, read from a profile or from the top level.
struct Layer {
  std::optional<std::string> model, model_provider, approval_policy, sandbox_mode, model_reasoning_effort,
      model_reasoning_summary, model_verbosity, chatgpt_base_url;
  std::optional<PathSetting> instructions_file, compact_prompt_file;
  std::vector<FeatureStep> legacy_features, features;
};

Layer read_layer(const Section& t, bool is_profile) {
  Layer l;
  l.model = t.string("model");
  l.model_provider = t.string("model_provider");
  l.approval_policy = t.one_of("approval_policy", {"untrusted", "on-failure", "on-request", "never"});
  l.sandbox_mode = t.one_of("sandbox_mode", {"read-only", "workspace-write", "danger-full-access"});
  // The Codex SDK's values too (modelReasoningEffort); the provider decides what it takes.
  l.model_reasoning_effort = t.one_of("model_reasoning_effort", {"none", "minimal", "low", "medium", "high", "xhigh",
                                                                 "max", "ultra", "persistent"});
  l.model_reasoning_summary = t.one_of("model_reasoning_summary", {"auto", "concise", "detailed", "none"});
  l.model_verbosity = t.one_of("model_verbosity", {"low", "medium", "high"});
  l.chatgpt_base_url = t.string("chatgpt_base_url");
  if (auto v = t.string("experimental_instructions_file"))
    l.instructions_file = {*v, t.where("experimental_instructions_file")};
  if (auto v = t.string("experimental_compact_prompt_file"))
    l.compact_prompt_file = {*v, t.where("experimental_compact_prompt_file")};
  l.legacy_features = legacy_feature_steps(t, is_profile);
  if (auto f = t.table("features")) l.features = feature_table_steps(*f);
  return l;
}

std::string trim(std::string_view s) { return text::trim(s, " \t\r\n"); }

// The trimmed contents of an instructions file (relative to cwd); empty is an error.
std::string read_instructions_file(const PathSetting& p, const std::string& cwd, std::string_view what) {
  fs::path path(p.path);
  if (path.is_relative()) path = fs::path(cwd) / path;
  auto content = files::read(path.string());
  if (!content) throw ConfigError(fmt::format("{}: failed to read {} file `{}`", p.where, what, path.string()));
  std::string text = trim(*content);
  if (text.empty()) throw ConfigError(fmt::format("{}: {} file `{}` is empty", p.where, what, path.string()));
  return text;
}

toml::table parse_config_text(const std::string& file, const std::string& text) {
  try {
    return parse_toml(text, file);
  } catch (const toml::parse_error& err) {
    throw ConfigError(
        fmt::format("{}:{}:{}: {}", file, err.source().begin.line, err.source().begin.column, err.description()));
  }
}

// config.toml as parsed the last time it changed (files::settings_cache): a request pays one
// stat() for it, not a read and a parse. Overrides edit a fresh parse of the cached text (a
// copied toml++ table loses the source positions errors name).
struct ConfigDocument {
  std::shared_ptr<const toml::table> cached;
  std::optional<toml::table> edited;
  const toml::table& root() const { return edited ? *edited : *cached; }
};

ConfigDocument config_document(const std::string& file, bool will_edit) {
  auto& cache = files::settings_cache();
  ConfigDocument doc;
  if (!will_edit) {
    doc.cached = cache.derived<toml::table>(file, [&](const files::Cache::Text& text) {
      return text ? parse_config_text(file, *text) : toml::table{};
    });
    return doc;
  }
  auto text = cache.read(file);
  doc.edited = text ? parse_config_text(file, *text) : toml::table{};
  return doc;
}

std::string resolve_cwd(const std::optional<std::string>& requested) {
  std::error_code ec;
  fs::path p(requested.value_or(fs::current_path(ec).string()));
  if (p.is_relative()) p = fs::current_path(ec) / p;
  auto canon = fs::weakly_canonical(p, ec);
  return ec || canon.empty() ? p.lexically_normal().string() : canon.string();
}

}  // namespace

ConfigOverrides ConfigOverrides::merged(const ConfigOverrides& over) const {
  ConfigOverrides o = *this;
  auto take = [](auto& mine, const auto& theirs) {
    if (theirs) mine = theirs;
  };
  take(o.model, over.model);
  take(o.profile, over.profile);
  take(o.cwd, over.cwd);
  take(o.approval_policy, over.approval_policy);
  take(o.sandbox_mode, over.sandbox_mode);
  take(o.model_provider, over.model_provider);
  take(o.base_instructions, over.base_instructions);
  take(o.developer_instructions, over.developer_instructions);
  take(o.compact_prompt, over.compact_prompt);
  o.cli_overrides.insert(o.cli_overrides.end(), over.cli_overrides.begin(), over.cli_overrides.end());
  o.json_overrides.insert(o.json_overrides.end(), over.json_overrides.begin(), over.json_overrides.end());
  return o;
}

Config load_config(const ConfigOverrides& o) {
  Config cfg;
  cfg.llmx_home = llmx_home();
  const std::string file = cfg.llmx_home + "/config.toml";
  auto doc = config_document(file, !o.cli_overrides.empty() || !o.json_overrides.empty());
  Ctx ctx(file, cfg.warnings);
  for (const auto& raw : o.cli_overrides) ctx.mark_overridden(apply_cli_override(*doc.edited, raw));
  for (const auto& [key, value] : o.json_overrides)
    if (apply_json_override(*doc.edited, key, value)) ctx.mark_overridden(key);
  const toml::table& root = doc.root();

  const Section top(ctx, root);
  top.check_keys({"model", "review_model", "model_provider", "model_context_window", "model_max_output_tokens",
                  "model_auto_compact_token_limit", "approval_policy", "sandbox_mode", "sandbox_workspace_write",
                  "shell_environment_policy", "notify", "instructions", "developer_instructions", "compact_prompt",
                  "experimental_instructions_file", "experimental_compact_prompt_file", "mcp_servers",
                  "mcp_oauth_credentials_store", "cli_auth_credentials_store", "model_providers",
                  "project_doc_max_bytes", "project_doc_fallback_filenames", "profile", "profiles", "history", "cluster",
                  "file_opener", "tui", "hide_agent_reasoning", "show_raw_agent_reasoning", "model_reasoning_effort",
                  "model_reasoning_summary", "model_verbosity", "model_supports_reasoning_summaries",
                  "model_reasoning_summary_format", "chatgpt_base_url", "forced_login_method",
                  "forced_chatgpt_workspace_id", "projects", "tools", "features", "disable_paste_burst",
                  "windows_wsl_setup_acknowledged", "notice", "otel", "experimental_use_unified_exec_tool",
                  "experimental_use_rmcp_client", "experimental_use_freeform_apply_patch",
                  "experimental_sandbox_command_assessment", "include_apply_patch_tool",
                  // what the Codex SDK passes for its `baseUrl` option
                  "openai_base_url",
                  // llmx's own
                  "approval_timeout", "sandbox_fallback", "rollout_fsync"});
  cfg.cwd = resolve_cwd(o.cwd);

  // Every profile is checked; the active one is applied.
  const Layer base = read_layer(top, false);
  std::map<std::string, Layer, std::less<>> profiles;
  if (auto ps = top.table("profiles")) {
    for (auto&& [k, v] : ps->table()) {
      auto p = ps->table(k.str());
      p->check_keys({"model", "model_provider", "approval_policy", "sandbox_mode", "model_reasoning_effort",
                     "model_reasoning_summary", "model_verbosity", "chatgpt_base_url", "experimental_instructions_file",
                     "experimental_compact_prompt_file", "include_apply_patch_tool",
                     "experimental_use_unified_exec_tool", "experimental_use_rmcp_client",
                     "experimental_use_freeform_apply_patch", "experimental_sandbox_command_assessment",
                     "tools_web_search", "tools_view_image", "features"});
      profiles[std::string(k.str())] = read_layer(*p, true);
    }
  }
  Layer prof;
  std::optional<std::string> profile_name = o.profile ? o.profile : top.string("profile");
  if (profile_name) {
    auto it = profiles.find(*profile_name);
    if (it == profiles.end())
      throw ConfigError(fmt::format("{}: config profile `{}` not found (no [profiles.{}] table)", file, *profile_name,
                                    key_part(*profile_name)));
    prof = it->second;
    cfg.active_profile = profile_name;
  }
  // The profile's value unless an override replaced the top-level key.
  auto pick = [&]<class T>(std::optional<T> Layer::*member, std::string_view key) -> std::optional<T> {
    if ((prof.*member) && !ctx.overridden(key)) return prof.*member;
    return base.*member;
  };

  if (auto v = pick(&Layer::model, "model")) cfg.model = *v;
  if (o.model) cfg.model = *o.model;
  if (auto v = top.string("review_model")) cfg.review_model = *v;

  auto providers = builtin_providers();
  // `openai_base_url` (the Codex SDK's `baseUrl`): the built-in providers' endpoint, over the
  // environment's.
  if (auto url = top.string("openai_base_url"))
    for (const char* id : {"litellm", "openai"}) providers[id].base_url = *url;
  if (auto user = top.table("model_providers"))
    for (auto&& [k, v] : user->table()) apply_provider_table(providers, *user->table(k.str()), std::string(k.str()));
  std::string provider_id = "litellm";
  if (auto v = pick(&Layer::model_provider, "model_provider")) provider_id = *v;
  if (o.model_provider) provider_id = *o.model_provider;
  auto it = providers.find(provider_id);
  if (it == providers.end()) throw ConfigError(fmt::format("Model provider `{}` not found", provider_id));
  cfg.provider = it->second;
  auth::attach_stored_api_key(cfg.provider, cfg.llmx_home);

  if (auto v = pick(&Layer::approval_policy, "approval_policy"))
    cfg.approval_policy = *enum_from_name<AskForApproval>(*v);
  if (o.approval_policy) cfg.approval_policy = *o.approval_policy;
  // A trusted project (by cwd or its repository) defaults to workspace-write.
  bool trusted = project_is_trusted(top, cfg.cwd);
  auto mode = pick(&Layer::sandbox_mode, "sandbox_mode");
  if (mode)
    cfg.sandbox_policy.mode = *enum_from_name<SandboxMode>(*mode);
  else if (trusted)
    cfg.sandbox_policy.mode = SandboxMode::workspace_write;
  if (o.sandbox_mode) cfg.sandbox_policy.mode = *o.sandbox_mode;
  if (auto t = top.table("sandbox_workspace_write")) read_sandbox_workspace_write(*t, cfg);
  if (auto v = top.one_of("sandbox_fallback", {"refuse", "unsandboxed-with-approval"})) cfg.sandbox_fallback = *v;
  if (auto t = top.table("shell_environment_policy")) read_shell_environment_policy(*t, cfg.shell_environment_policy);

  if (auto v = pick(&Layer::model_reasoning_effort, "model_reasoning_effort")) cfg.reasoning_effort = *v;
  if (auto v = pick(&Layer::model_reasoning_summary, "model_reasoning_summary")) cfg.reasoning_summary = *v;
  cfg.model_verbosity = pick(&Layer::model_verbosity, "model_verbosity");
  if (auto v = pick(&Layer::chatgpt_base_url, "chatgpt_base_url")) cfg.chatgpt_base_url = *v;
  cfg.model_supports_reasoning_summaries = top.boolean("model_supports_reasoning_summaries");
  cfg.model_reasoning_summary_format = top.one_of("model_reasoning_summary_format", {"none", "experimental"});
  cfg.model_context_window = top.integer("model_context_window", 0);
  cfg.model_max_output_tokens = top.integer("model_max_output_tokens", 0);
  cfg.model_auto_compact_token_limit = top.integer("model_auto_compact_token_limit");
  if (auto v = top.integer("approval_timeout", 0)) cfg.approval_timeout_ms = *v * 1000;
  cfg.notify = top.strings("notify");
  (void)top.string("instructions");  // parsed, ignored (engine.md §1.4)

  // Instructions: typed override > file (profile, then top level) > key.
  cfg.developer_instructions = top.string("developer_instructions");
  if (auto v = top.string("compact_prompt"); v && !trim(*v).empty()) cfg.compact_prompt = trim(*v);
  auto instructions_file = prof.instructions_file && !ctx.overridden("experimental_instructions_file")
                               ? prof.instructions_file
                               : base.instructions_file;
  if (instructions_file) cfg.base_instructions = read_instructions_file(*instructions_file, cfg.cwd, "instructions");
  auto compact_file = prof.compact_prompt_file && !ctx.overridden("experimental_compact_prompt_file")
                          ? prof.compact_prompt_file
                          : base.compact_prompt_file;
  if (compact_file) cfg.compact_prompt = read_instructions_file(*compact_file, cfg.cwd, "compact prompt");
  if (o.base_instructions) cfg.base_instructions = *o.base_instructions;
  if (o.developer_instructions) cfg.developer_instructions = *o.developer_instructions;
  if (o.compact_prompt) cfg.compact_prompt = *o.compact_prompt;

  // Features: defaults < legacy keys < [features] < profile legacy keys < profile [features];
  // a top-level key set by an override then beats the profile again.
  using Steps = const std::vector<FeatureStep>*;
  for (Steps steps :
       {Steps(&base.legacy_features), Steps(&base.features), Steps(&prof.legacy_features), Steps(&prof.features)})
    for (const auto& s : *steps) apply_feature(cfg.features, s.feature, s.value);
  for (Steps steps : {Steps(&base.legacy_features), Steps(&base.features)})
    for (const auto& s : *steps)
      if (ctx.overridden(s.path)) apply_feature(cfg.features, s.feature, s.value);

  if (auto v = top.integer("project_doc_max_bytes", 0)) cfg.project_doc_max_bytes = *v;
  if (auto v = top.strings("project_doc_fallback_filenames"))
    for (const auto& name : *v)
      if (auto t = trim(name); !t.empty()) cfg.project_doc_fallback_filenames.push_back(t);
  cfg.user_instructions = project_doc::user_instructions(cfg.llmx_home, cfg.cwd, cfg.project_doc_max_bytes,
                                                         cfg.project_doc_fallback_filenames);

  if (auto t = top.table("history")) read_history(*t, cfg.history);
  if (auto t = top.table("cluster")) read_cluster(*t, cfg.cluster);
  if (auto v = top.boolean("hide_agent_reasoning")) cfg.hide_agent_reasoning = *v;
  if (auto v = top.boolean("show_raw_agent_reasoning")) cfg.show_raw_agent_reasoning = *v;
  if (auto v = top.one_of("file_opener", {"vscode", "vscode-insiders", "windsurf", "cursor", "none"}))
    cfg.file_opener = *v;
  cfg.forced_login_method = top.one_of("forced_login_method", {"chatgpt", "api"});
  cfg.forced_chatgpt_workspace_id = top.string("forced_chatgpt_workspace_id");
  if (auto v = top.one_of("mcp_oauth_credentials_store", {"auto", "file", "keyring"}))
    cfg.mcp_oauth_credentials_store = *v;
  if (auto v = top.one_of("cli_auth_credentials_store", {"file", "keyring", "auto"}))
    cfg.cli_auth_credentials_store = *v;
  (void)top.boolean("disable_paste_burst");
  (void)top.boolean("windows_wsl_setup_acknowledged");
  read_ui_tables(top);
  if (auto servers = top.table("mcp_servers"))
    for (auto&& [k, v] : servers->table())
      cfg.mcp_servers[std::string(k.str())] = read_mcp_server(*servers->table(k.str()), std::string(k.str()));
  if (auto v = top.one_of("rollout_fsync", {"none", "turn", "always"})) cfg.rollout_fsync = *v;
  return cfg;
}

void apply_override(Config& cfg, const OverrideTurnContextOp& o) {
  if (o.cwd) cfg.cwd = *o.cwd;
  if (o.approval_policy) cfg.approval_policy = *o.approval_policy;
  if (o.sandbox_policy) cfg.sandbox_policy = *o.sandbox_policy;
  if (o.model) cfg.model = *o.model;
  if (o.effort) cfg.reasoning_effort = *o.effort;
  if (o.summary) cfg.reasoning_summary = *o.summary;
}

}  // namespace llmx
