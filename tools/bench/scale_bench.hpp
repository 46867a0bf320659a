// llmx-bench rows for scale (issue 18, point 3): N idle conversations in one `llmx mcp-server`,
// created as fast as one client can ask (conversations/s), what each costs in memory, and how
// long the process takes to exit once stdin closes (every conversation shut down, rollouts written).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmx::bench {

struct ScaleBenchEnv {
  std::string llmx, url, home;
  std::vector<int> counts = {10000, 20000, 50000, 100000};
};

void scale_rows(const ScaleBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
