// Resolved settings of one conversation and the loader that produces them from
// $LLMX_HOME/config.toml, profiles, `-c key=value` overrides and typed overrides (engine.md §4).
//
// Every key of engine.md §4.4 is read and type-checked. Unknown keys (top level, profiles and the
// known sub-tables) become `warnings`; a value of the wrong type or an unknown enum spelling is a
// ConfigError naming `file:line:col` and the key. Keys that only matter to a terminal UI
// (`tui.*`, `notice.*`, `otel.*`, `file_opener`, `hide_agent_reasoning`, `disable_paste_burst`,
// `windows_wsl_setup_acknowledged`) are accepted and type-checked but change nothing here.
//
// llmx's own keys, beyond the reference:
//   approval_timeout = 600                      seconds an approval request waits (DECISIONS P3)
//   sandbox_fallback = "refuse"                 or "unsandboxed-with-approval" (E11)
//   sandbox_workspace_write.allow_git_writes    `.git` writable in workspace-write (E11)
//   rollout_fsync = "none"                      "turn" | "always": when rollout files are fsynced
//   model_providers.<id>.include_usage / prompt_cache   (E4 / E6)
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "protocol/core/ops.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/config/provider.hpp"

namespace llmx {

// [shell_environment_policy] (engine.md §4.6): which variables commands inherit.
struct ShellEnvironmentConfig {
  friend bool operator==(const ShellEnvironmentConfig&, const ShellEnvironmentConfig&) = default;
  std::string inherit = "all";  // all | core | none
  bool ignore_default_excludes = false;
  std::vector<std::string> exclude;
  std::map<std::string, std::string> set;
  std::vector<std::string> include_only;
  LLMX_FIELDS(v("inherit", s.inherit); v("ignore_default_excludes", s.ignore_default_excludes);
              v("exclude", s.exclude); v("set", s.set); v("include_only", s.include_only))
};

// [features] (engine.md §4.5), after legacy aliases and profiles are applied.
struct Features {
  friend bool operator==(const Features&, const Features&) = default;
  bool unified_exec = false;
  bool rmcp_client = false;
  bool apply_patch_freeform = false;
  bool view_image_tool = true;
  bool web_search_request = false;
  bool experimental_sandbox_command_assessment = false;
  bool ghost_commit = true;
  bool enable_experimental_windows_sandbox = false;
  // The optional file tools (DECISIONS E9), also on for families that list them.
  bool read_file_tool = false;
  bool list_dir_tool = false;
  bool grep_files_tool = false;
  // Every flag is optional in the file: Field::defaulted throughout.
  LLMX_FIELDS(constexpr auto d = Field::defaulted;
              v("unified_exec", s.unified_exec, d); v("rmcp_client", s.rmcp_client, d);
              v("apply_patch_freeform", s.apply_patch_freeform, d); v("view_image_tool", s.view_image_tool, d);
              v("web_search_request", s.web_search_request, d);
              v("experimental_sandbox_command_assessment", s.experimental_sandbox_command_assessment, d);
              v("ghost_commit", s.ghost_commit, d);
              v("enable_experimental_windows_sandbox", s.enable_experimental_windows_sandbox, d);
              v("read_file_tool", s.read_file_tool, d); v("list_dir_tool", s.list_dir_tool, d);
              v("grep_files_tool", s.grep_files_tool, d))
};

// One [mcp_servers.<name>] table (engine.md §10.1). `command` selects stdio, `url` streamable
// HTTP; the fields of the other transport are rejected when the file is loaded.
struct McpServerConfig {
  friend bool operator==(const McpServerConfig&, const McpServerConfig&) = default;
  // stdio
  std::optional<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::vector<std::string> env_vars;  // parent variables passed through
  std::optional<std::string> cwd;
  // streamable HTTP
  std::optional<std::string> url;
  std::optional<std::string> bearer_token_env_var;
  std::map<std::string, std::string> http_headers;
  std::map<std::string, std::string> env_http_headers;
  // both
  std::optional<double> startup_timeout_sec;  // unset: 10 s (startup_timeout_ms is folded in)
  std::optional<double> tool_timeout_sec;     // unset: 60 s
  bool enabled = true;
  std::optional<std::vector<std::string>> enabled_tools;
  std::optional<std::vector<std::string>> disabled_tools;
  LLMX_FIELDS(v("command", s.command); v("args", s.args, Field::defaulted); v("env", s.env, Field::defaulted);
              v("env_vars", s.env_vars, Field::defaulted); v("cwd", s.cwd); v("url", s.url);
              v("bearer_token_env_var", s.bearer_token_env_var); v("http_headers", s.http_headers, Field::defaulted);
              v("env_http_headers", s.env_http_headers, Field::defaulted);
              v("startup_timeout_sec", s.startup_timeout_sec); v("tool_timeout_sec", s.tool_timeout_sec);
              v("enabled", s.enabled, Field::defaulted); v("enabled_tools", s.enabled_tools);
              v("disabled_tools", s.disabled_tools))

  bool is_stdio() const { return command.has_value(); }
  double startup_timeout() const { return startup_timeout_sec.value_or(10.0); }
  double tool_timeout() const { return tool_timeout_sec.value_or(60.0); }
};

// [history] (engine.md §9.6).
struct HistoryConfig {
  friend bool operator==(const HistoryConfig&, const HistoryConfig&) = default;
  std::string persistence = "save-all";  // save-all | none
  std::optional<int64_t> max_bytes;      // parsed, not enforced
  LLMX_FIELDS(v("persistence", s.persistence, Field::defaulted); v("max_bytes", s.max_bytes))
};

// [cluster] (issue 15): the worker nodes (`llmx node`) an mcp-server or app-server places its
// conversations on, and the PEM files for TLS to them (all three, or none on loopback).
struct ClusterConfig {
  friend bool operator==(const ClusterConfig&, const ClusterConfig&) = default;
  std::vector<std::string> nodes;  // host:port
  std::string cert, key, cafile;
  LLMX_FIELDS(v("nodes", s.nodes, Field::defaulted); v("cert", s.cert, Field::defaulted);
              v("key", s.key, Field::defaulted); v("cafile", s.cafile, Field::defaulted))
};

struct Config {
  // Conversations with equal settings share one copy (the conversation manager interns them).
  friend bool operator==(const Config&, const Config&) = default;
  std::string llmx_home;
  std::string model = "anthropic/claude-sonnet-4-20250514";
  ModelProviderInfo provider;  // the selected provider (id inside)
  AskForApproval approval_policy = AskForApproval::on_request;
  SandboxPolicy sandbox_policy;
  std::string cwd;
  std::optional<std::string> base_instructions;  // experimental_instructions_file or a request
  std::optional<std::string> developer_instructions;
  std::optional<std::string> compact_prompt;    // trimmed; empty means unset
  std::optional<std::string> reasoning_effort;  // model_reasoning_effort
  std::string reasoning_summary = "auto";       // model_reasoning_summary
  std::optional<int64_t> model_context_window;
  int64_t approval_timeout_ms = 600000;  // DECISIONS P3
  std::string session_source = "cli";    // cli | exec | mcp | vscode
  // False for front ends with nobody to ask (llmx exec): calls that need approval are refused.
  bool interactive_approvals = true;
  ShellEnvironmentConfig shell_environment_policy;
  bool allow_git_writes = false;            // sandbox_workspace_write.allow_git_writes (E11)
  std::string sandbox_fallback = "refuse";  // refuse | unsandboxed-with-approval (E11)

  std::optional<std::string> active_profile;  // the profile that was applied, if any
  std::string review_model = "anthropic/claude-sonnet-4-20250514";
  std::optional<int64_t> model_max_output_tokens;
  std::optional<int64_t> model_auto_compact_token_limit;  // unset: 90% of the window (E14)
  std::optional<std::string> model_verbosity;             // low | medium | high
  // The final answer must be JSON of this schema (`llmx exec --output-schema`; not a config key).
  std::optional<RawJson> output_schema;
  // `llmx exec --cyber-access-program`: sent on the Responses wire as access_programs.cyber.
  std::optional<std::string> cyber_access_program;
  // `llmx exec --thread-source`: how a new thread is classified in its session_meta.
  std::optional<std::string> thread_source;
  std::optional<bool> model_supports_reasoning_summaries;
  std::optional<std::string> model_reasoning_summary_format;  // none | experimental
  std::optional<std::vector<std::string>> notify;             // argv (engine.md §4.9)
  // AGENTS.md contents (engine.md §1.4): sent as a user message and stored in session_meta.
  std::optional<std::string> user_instructions;
  int64_t project_doc_max_bytes = 32768;
  std::vector<std::string> project_doc_fallback_filenames;
  HistoryConfig history;
  ClusterConfig cluster;
  bool hide_agent_reasoning = false;
  bool show_raw_agent_reasoning = false;
  std::string file_opener = "vscode";
  std::string chatgpt_base_url = "https://chatgpt.com/backend-api/";
  std::optional<std::string> forced_login_method;  // chatgpt | api
  std::optional<std::string> forced_chatgpt_workspace_id;
  std::string mcp_oauth_credentials_store = "auto";  // auto | file | keyring
  std::string cli_auth_credentials_store = "file";   // file | keyring | auto
  Features features;
  std::map<std::string, McpServerConfig> mcp_servers;
  std::string rollout_fsync = "none";  // none | turn | always
  // Problems that did not stop loading (unknown keys), each `file:line: message`.
  std::vector<std::string> warnings;

  LLMX_FIELDS(v("llmx_home", s.llmx_home); v("model", s.model); v("provider", s.provider);
              v("approval_policy", s.approval_policy); v("sandbox_policy", s.sandbox_policy); v("cwd", s.cwd);
              v("base_instructions", s.base_instructions);
              v("developer_instructions", s.developer_instructions); v("compact_prompt", s.compact_prompt);
              v("reasoning_effort", s.reasoning_effort); v("reasoning_summary", s.reasoning_summary);
              v("model_context_window", s.model_context_window);
              v("approval_timeout_ms", s.approval_timeout_ms); v("session_source", s.session_source);
              v("interactive_approvals", s.interactive_approvals, Field::defaulted);
              v("shell_environment_policy", s.shell_environment_policy, Field::defaulted);
              v("allow_git_writes", s.allow_git_writes, Field::defaulted);
              v("sandbox_fallback", s.sandbox_fallback, Field::defaulted);
              v("active_profile", s.active_profile); v("review_model", s.review_model, Field::defaulted);
              v("model_max_output_tokens", s.model_max_output_tokens);
              v("model_auto_compact_token_limit", s.model_auto_compact_token_limit);
              v("model_verbosity", s.model_verbosity); v("output_schema", s.output_schema);
              v("cyber_access_program", s.cyber_access_program); v("thread_source", s.thread_source);
              v("model_supports_reasoning_summaries", s.model_supports_reasoning_summaries);
              v("model_reasoning_summary_format", s.model_reasoning_summary_format); v("notify", s.notify);
              v("user_instructions", s.user_instructions);
              v("project_doc_max_bytes", s.project_doc_max_bytes, Field::defaulted);
              v("project_doc_fallback_filenames", s.project_doc_fallback_filenames, Field::defaulted);
              v("history", s.history, Field::defaulted); v("cluster", s.cluster, Field::defaulted);
              v("hide_agent_reasoning", s.hide_agent_reasoning, Field::defaulted);
              v("show_raw_agent_reasoning", s.show_raw_agent_reasoning, Field::defaulted);
              v("file_opener", s.file_opener, Field::defaulted);
              v("chatgpt_base_url", s.chatgpt_base_url, Field::defaulted);
              v("forced_login_method", s.forced_login_method);
              v("forced_chatgpt_workspace_id", s.forced_chatgpt_workspace_id);
              v("mcp_oauth_credentials_store", s.mcp_oauth_credentials_store, Field::defaulted);
              v("cli_auth_credentials_store", s.cli_auth_credentials_store, Field::defaulted);
              v("features", s.features, Field::defaulted); v("mcp_servers", s.mcp_servers, Field::defaulted);
              v("rollout_fsync", s.rollout_fsync, Field::defaulted);
              v("warnings", s.warnings, Field::defaulted))};

// What a front end may override, highest precedence last: config.toml < profile < `-c` <
// these typed values.
struct ConfigOverrides {
  std::optional<std::string> model = {};
  std::optional<std::string> profile = {};
  std::optional<std::string> cwd = {};
  std::optional<AskForApproval> approval_policy = {};
  std::optional<SandboxMode> sandbox_mode = {};
  std::optional<std::string> model_provider = {};
  std::optional<std::string> base_instructions = {};
  std::optional<std::string> developer_instructions = {};
  std::optional<std::string> compact_prompt = {};
  // `-c key.path=value` (value parsed as TOML, else taken as a string).
  std::vector<std::string> cli_overrides = {};
  // Dotted keys with JSON values (the MCP tool's `config` object).
  std::vector<std::pair<std::string, RawJson>> json_overrides = {};

  // These overrides with `over` applied on top: its set fields replace ours, its `-c` and JSON
  // overrides come after ours (so they win). The one place settings are patched from overrides.
  ConfigOverrides merged(const ConfigOverrides& over) const;
};

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// $LLMX_HOME when set and non-empty: canonicalised, and it must be an existing directory
// (ConfigError naming it otherwise). Else ~/.llmx, which need not exist.
std::string llmx_home();

// Loads `<home>/.env` into the process environment (engine.md §4.1): `KEY=VALUE` lines, `#`
// comments, an optional `export ` prefix, values optionally in single (literal) or double quotes
// (with \n, \t, \", \\ escapes). Values replace variables already set, as in the reference, except
// that keys whose upper-cased name starts with `LLMX_` are never taken from the file. A missing
// file is fine; unreadable lines are skipped. Call before any thread starts.
void load_dotenv(const std::string& home);

// Loads and resolves the configuration; throws ConfigError with a message naming the file,
// line and key on bad input.
Config load_config(const ConfigOverrides& overrides);

// The settings a conversation keeps after an override_turn_context op (or a user_turn's).
void apply_override(Config& cfg, const OverrideTurnContextOp& o);

}  // namespace llmx

namespace llmx {

// The layers the settings come from, as JSON (v2 config/read), lowest precedence first: the user's
// `<home>/config.toml` and the session's flags (the server's `-c` and named overrides). `merged`
// is the user file with the flags applied: the effective table, before defaults.
struct ConfigLayersJson {
  std::string user_file;
  std::string user;    // "{}" when the file does not exist
  std::string flags;   // "{}" without overrides
  std::string merged;
};
// Throws ConfigError for an unreadable or invalid file or override.
ConfigLayersJson config_layers_json(const ConfigOverrides& overrides);

}  // namespace llmx
