// llmx-bench rows for stored threads (issue 4): the first page of listConversations with
// 1,000 / 10,000 / 50,000 stored threads, and resuming a 10,000-item conversation, all through
// a real `llmx mcp-server`.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmx::bench {

struct ThreadsBenchEnv {
  std::string llmx;  // the llmx binary
  std::string url;   // mock-llm base URL
  std::string home;  // a scratch directory; one LLMX_HOME per size is made below it
  std::vector<int> sizes = {1000, 10000, 50000};
};

void threads_rows(const ThreadsBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
