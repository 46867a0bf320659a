// llmx-bench rows for the MCP client (issue 13): what a tool call through llmx's client actor
// costs over calling the same server directly, and 200 conversations calling one shared server.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct McpBenchEnv {
  std::string llmx;         // the llmx binary
  std::string url;          // mock-llm base URL
  std::string home;         // a scratch directory
  std::string node;         // node, which runs the server
  std::string fake_server;  // test/mcp_client/fake_mcp_server.mjs
  int conversations = 200;
};

void mcp_rows(const McpBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
