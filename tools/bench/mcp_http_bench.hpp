// llmx-bench rows for `llmx mcp-server --listen http://…` (issue 16): what MCP over Streamable
// HTTP costs next to stdio — a request in a 2025 session on a kept-alive connection, a new
// session, a one-answer tool call streamed as SSE, and a 2026-07-28 call without a session.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct McpHttpBenchEnv {
  std::string llmx, url, home;
};

void mcp_http_rows(const McpHttpBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
