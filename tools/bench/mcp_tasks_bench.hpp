// llmx-bench rows for `llmx mcp-server`'s MCP revisions (issue 16): what a tool call made as a
// 2025-11-25 task costs (answered with a task, then its result) and a 2026-07-28 call without a
// handshake, next to a plain 2025 call, each a one-answer turn.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct McpTasksBenchEnv {
  std::string llmx, url, home;
};

void mcp_tasks_rows(const McpTasksBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
