// `llmx exec PROMPT`: one task, answer streamed to stdout; with --json the event stream the Codex
// SDK reads (protocol/rpc/exec_events.hpp), with --core-events every core event.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/config/config.hpp"

namespace llmx::cli {

struct ExecOptions {
  std::string prompt;
  bool json = false;         // --json / --experimental-json: the SDK's event stream
  bool core_events = false;  // --core-events: every core event as one JSON line
  bool skip_git_repo_check = false;  // run outside a git repository too
  std::string color = "auto";        // colours on stderr: auto (a terminal), always, never
  // `llmx exec resume <id> PROMPT` / `llmx exec resume --last PROMPT`: continue a stored thread,
  // appending to its rollout.
  std::optional<std::string> resume_id;
  bool resume_last = false;
  std::vector<std::string> images;       // --image FILE: attached to the prompt
  std::vector<std::string> add_dirs;     // --add-dir DIR: writable besides the workspace
  std::string output_last_message;       // --output-last-message FILE: the final answer, written there
  std::string output_schema;             // --output-schema FILE: the final answer is JSON of this schema
  std::string thread_source;             // --thread-source S: a new thread's classification
  std::string cyber_access_program;      // --cyber-access-program P (Responses wire only)
  ConfigOverrides overrides;
};

int run_exec(const ExecOptions& options);

}  // namespace llmx::cli
