// llmx-bench soak (issue 18, point 7): mixed load on one `llmx mcp-server` for a set time: a
// thousand conversations, commands and patches, interrupts, model faults (cuts, 429s, 5xx,
// hangs), MCP tool calls. RSS and open files are sampled throughout; at the end every rollout
// file must load.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct SoakBenchEnv {
  std::string llmx, url, home, node, fake_server;
  double minutes = 5;
  int conversations = 1000;  // distinct conversations; later calls continue them
  int in_flight = 64;        // calls running at once
};

void soak_rows(const SoakBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
