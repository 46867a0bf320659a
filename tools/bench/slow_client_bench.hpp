// llmx-bench rows for a slow client (issue 18, point 6): many long turns streamed through one
// `llmx mcp-server` to a client that reads slower than the model writes. What the server holds
// for it (peak RSS), how long a ping waits behind the queued notifications, and the server's CPU
// per delta under that load.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct SlowClientBenchEnv {
  std::string llmx, url, home;
  int turns = 200;
  int deltas = 2000;           // per turn
  double read_mb_per_s = 20;   // how fast the client reads
  int delay_ms = 0;            // per delta: 0 streams as fast as mock-llm can (faster than llmx)
  // Set: the row starts its own mock-llm from this binary at nice 19, standing for a provider on
  // another machine. Unset, mock-llm's 200 streaming threads share the two cores with llmx as
  // equals and the OS, not llmx, decides how long a ping waits.
  std::string niced_mock;
};

void slow_client_rows(const SlowClientBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
