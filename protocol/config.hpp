// Resolved settings of one conversation and the loader that produces them from
// $LLMX_HOME/config.toml, profiles, `-c key=value` overrides and typed overrides (engine.md §4).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "protocol/policy.hpp"
#include "protocol/provider.hpp"

namespace llmx {

// [shell_environment_policy] (engine.md §4.6): which variables commands inherit.
struct ShellEnvironmentConfig {
  std::string inherit = "all";  // all | core | none
  bool ignore_default_excludes = false;
  std::vector<std::string> exclude;
  std::map<std::string, std::string> set;
  std::vector<std::string> include_only;
  LLMX_FIELDS(v("inherit", s.inherit); v("ignore_default_excludes", s.ignore_default_excludes);
              v("exclude", s.exclude); v("set", s.set); v("include_only", s.include_only))
};

struct Config {
  std::string llmx_home;
  std::string model = "anthropic/claude-sonnet-4-20250514";
  ModelProviderInfo provider;  // the selected provider (id inside)
  AskForApproval approval_policy = AskForApproval::on_request;
  SandboxPolicy sandbox_policy;
  std::string cwd;
  std::optional<std::string> base_instructions;
  std::optional<std::string> developer_instructions;
  std::optional<std::string> compact_prompt;
  std::optional<std::string> reasoning_effort;
  std::string reasoning_summary = "auto";
  std::optional<int64_t> model_context_window;
  int64_t approval_timeout_ms = 600000;  // DECISIONS P3
  std::string session_source = "cli";    // cli | exec | mcp | vscode
  // False for front ends with nobody to ask (llmx exec): calls that need approval are refused.
  bool interactive_approvals = true;
  ShellEnvironmentConfig shell_environment_policy;
  bool allow_git_writes = false;              // sandbox_workspace_write.allow_git_writes (E11)
  std::string sandbox_fallback = "refuse";    // refuse | unsandboxed-with-approval (E11)
  LLMX_FIELDS(v("llmx_home", s.llmx_home); v("model", s.model); v("provider", s.provider);
              v("approval_policy", s.approval_policy); v("sandbox_policy", s.sandbox_policy);
              v("cwd", s.cwd); v("base_instructions", s.base_instructions);
              v("developer_instructions", s.developer_instructions);
              v("compact_prompt", s.compact_prompt); v("reasoning_effort", s.reasoning_effort);
              v("reasoning_summary", s.reasoning_summary);
              v("model_context_window", s.model_context_window);
              v("approval_timeout_ms", s.approval_timeout_ms);
              v("session_source", s.session_source);
              v("interactive_approvals", s.interactive_approvals, Field::defaulted);
              v("shell_environment_policy", s.shell_environment_policy, Field::defaulted);
              v("allow_git_writes", s.allow_git_writes, Field::defaulted);
              v("sandbox_fallback", s.sandbox_fallback, Field::defaulted))
};

// What a front end may override, highest precedence last: config.toml < profile < `-c` <
// these typed values.
struct ConfigOverrides {
  std::optional<std::string> model;
  std::optional<std::string> profile;
  std::optional<std::string> cwd;
  std::optional<AskForApproval> approval_policy;
  std::optional<SandboxMode> sandbox_mode;
  std::optional<std::string> model_provider;
  std::optional<std::string> base_instructions;
  std::optional<std::string> developer_instructions;
  std::optional<std::string> compact_prompt;
  // `-c key.path=value` (value parsed as TOML, else taken as a string).
  std::vector<std::string> cli_overrides;
  // Dotted keys with JSON values (the MCP tool's `config` object).
  std::vector<std::pair<std::string, RawJson>> json_overrides;
};

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// $LLMX_HOME if set and non-empty, else ~/.llmx.
std::string llmx_home();

// Loads and resolves the configuration; throws ConfigError with a message naming the file
// and key on bad input.
Config load_config(const ConfigOverrides& overrides);

}  // namespace llmx
