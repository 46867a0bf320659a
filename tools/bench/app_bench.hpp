// llmx-bench rows for `llmx app-server` (issue 5): spawn → initialize, one v2 turn
// (turn/start → turn/completed), and N threads turning at once through one process (turns/s,
// server CPU and peak memory).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmx::bench {

struct AppBenchEnv {
  std::string llmx;  // the llmx binary
  std::string url;   // mock-llm base URL
  std::string home;  // LLMX_HOME
  std::vector<int> parallel = {200, 1000};
};

void app_rows(const AppBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
