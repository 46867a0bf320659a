// llmx-bench rows for the model streamer alone (issue 6): many model requests through the real
// streamer actors, the shared curl event loop and its keep-alive pool, against mock-llm, with
// no conversation or session around them. Requests per second at a given concurrency, and the
// CPU this process spends per request and per streamed delta (text, and tool-call fragments),
// next to the mock's own CPU: the streamer is not the bottleneck while it spends less.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmx::bench {

struct StreamerBenchEnv {
  std::string url;     // mock-llm base URL
  int mock_pid = 0;    // for the mock's CPU time
  std::vector<int> concurrency = {100, 1000};
  int requests = 5000;  // per row
};

void streamer_rows(const StreamerBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
