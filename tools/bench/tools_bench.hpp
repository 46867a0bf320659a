// llmx-bench rows for tool execution: child start latency with and without the sandbox, output
// throughput through sandbox::ProcessLoop, and end to end through `llmx exec --core-events`.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct ToolsBenchEnv {
  std::string llmx;  // the llmx binary
  std::string url;   // mock-llm base URL
  std::string home;  // a scratch directory (LLMX_HOME and the command's cwd live below it)
};

// Runs the measurements and hands each Markdown table row to `row`.
void tools_rows(const ToolsBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
