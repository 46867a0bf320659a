// llmx-bench's client of one `llmx mcp-server` (optionally a front over worker nodes): spawn,
// initialize, `llmx` tool calls by id, and waiting for their results while counting
// notifications.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "process.hpp"
#include "protocol/base/json_reader.hpp"

namespace llmx::bench {

struct McpServerEnv {
  std::string llmx, url, home;
  std::vector<std::string> args;  // after `mcp-server` (e.g. --nodes A,B)
};

class McpServer {
 public:
  explicit McpServer(const McpServerEnv& env);
  bool initialize();
  int64_t call(const std::string& prompt);
  // Sends one request and returns its reply line ("" on timeout); notifications are skipped.
  std::string request(const std::string& method, const std::string& params_json,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20));

  struct Outcome {
    size_t completed = 0, failures = 0, notifications = 0;
  };
  // Reads until every id in `ids` has a response (or the timeout passes: the rest are failures).
  Outcome wait_for(std::set<int64_t> ids, std::chrono::milliseconds timeout);

  Child& child() { return child_; }

 private:
  Child child_;
  json::Parser parser_;
  int64_t next_id_ = 1;
};

}  // namespace llmx::bench
