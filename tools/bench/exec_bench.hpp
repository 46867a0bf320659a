// llmx-bench rows for `llmx exec` as a person, a script and the Codex SDK use it: process start
// to exit for one answer (human output and --json), and a multi-step task (command, patch,
// answer) in the workspace.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct ExecBenchEnv {
  std::string llmx;  // the llmx binary
  std::string url;   // mock-llm base URL
  std::string home;  // a scratch directory (LLMX_HOME and the workspaces live below it)
};

// Runs the measurements and hands each Markdown table row to `row`.
void exec_rows(const ExecBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
