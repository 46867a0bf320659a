// `llmx sandbox` (run a command under the sandbox, or --check what the kernel supports) and
// `llmx apply-patch` (apply a patch read from stdin, for scripts).
#pragma once

#include <string>
#include <vector>

#include "protocol/config/config.hpp"

namespace llmx::cli {

struct SandboxOptions {
  std::string mode = "read-only";
  bool check = false;
  bool network = false;
  std::vector<std::string> writable_roots;
  std::vector<std::string> command;
  ConfigOverrides overrides;  // -c key=value: sandbox_fallback, LLMX_HOME's secrets
};

int run_sandbox(const SandboxOptions& options);
int run_apply_patch(const std::string& cwd);

}  // namespace llmx::cli
