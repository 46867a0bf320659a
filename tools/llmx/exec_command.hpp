// `llmx exec PROMPT`: one task, answer streamed to stdout (or JSON events with --json).
#pragma once

#include <optional>
#include <string>

#include "protocol/config/config.hpp"

namespace llmx::cli {

struct ExecOptions {
  std::string prompt;
  bool json = false;
  // `llmx exec resume <id> PROMPT` / `llmx exec resume --last PROMPT`: continue a stored thread,
  // appending to its rollout.
  std::optional<std::string> resume_id;
  bool resume_last = false;
  ConfigOverrides overrides;
};

int run_exec(const ExecOptions& options);

}  // namespace llmx::cli
