// The environment of a child process (engine.md §4.6): built from the parent environment by the
// `shell_environment_policy`, never inherited implicitly (the spawner passes it as the whole env).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/config/config.hpp"

namespace llmx::sandbox {

struct ShellEnvironmentPolicy {
  std::string inherit = "all";  // "all" | "core" | "none"
  bool ignore_default_excludes = false;
  std::vector<std::string> exclude;        // case-insensitive globs (`*`, `?`)
  std::map<std::string, std::string> set;  // inserted after the excludes
  std::vector<std::string> include_only;   // when non-empty: keep only matching names
};

using EnvMap = std::map<std::string, std::string>;

// Case-insensitive glob with `*` (any run, also empty) and `?` (one character).
bool glob_match_icase(std::string_view pattern, std::string_view text);

// Applies the policy to `parent`; adds LLMX_SANDBOX_NETWORK_DISABLED=1 when `network_disabled`
// (the sandbox policy lacks full network access, even for escalated unsandboxed runs).
EnvMap build_child_env(const ShellEnvironmentPolicy& policy, const EnvMap& parent,
                       bool network_disabled);

// A command's environment from the configured `shell_environment_policy` and this process's
// environment (the one way the engine builds it).
EnvMap child_env(const ShellEnvironmentConfig& config, bool network_disabled);

// This process's environment as a map, with the secrets sealed away at start-up unless
// `with_sealed` is false (helpers such as git that need no credentials).
EnvMap current_process_env(bool with_sealed = true);

}  // namespace llmx::sandbox
