// llmx-bench rows for allocations per streamed delta (issue 18, point 4): each stdio server
// (MCP, app server, ACP) runs with a preloaded allocation counter, streams long and short turns,
// and the difference per delta is what one more delta costs in mallocs.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct AllocBenchEnv {
  std::string llmx, url, home;
  std::string counter;  // the preloaded counter library (llmx-alloc-counter.so)
};

void alloc_rows(const AllocBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
