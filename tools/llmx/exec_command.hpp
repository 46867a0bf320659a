// `llmx exec PROMPT`: one task, answer streamed to stdout (or JSON events with --json).
#pragma once

#include <string>

#include "protocol/config.hpp"

namespace llmx::cli {

struct ExecOptions {
  std::string prompt;
  bool json = false;
  ConfigOverrides overrides;
};

int run_exec(const ExecOptions& options);

}  // namespace llmx::cli
