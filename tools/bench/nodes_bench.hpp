// llmx-bench rows for worker nodes (issue 15): what the remote hop (front ↔ node over CAF's
// middleman on loopback) costs per turn and per streamed event against the in-process engine,
// and turns/s with 1, 2 and 3 nodes on this machine.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmx::bench {

struct NodesBenchEnv {
  std::string llmx, url, home;
  std::vector<int> node_counts = {1, 2, 3};
  int parallel = 500;  // conversations at once for the turns/s rows
};

void nodes_rows(const NodesBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
