// The MCP tools of one task as plain code (engine.md §10.3–10.4): which tools of the ready
// servers the model is offered under which names, the start-up report, and one call's events
// and output. ToolFlow routes a call here when its name is one of these tools.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "actors/messages.hpp"
#include "protocol/rpc/mcp_tool_names.hpp"

namespace llmx {

class McpTools {
 public:
  struct Target {
    std::string server;
    std::string tool;  // the server's own name
    bool read_only = false;
    caf::strong_actor_ptr client;
    int64_t timeout_ms = 60000;  // the server's tool_timeout_sec
  };

  McpTools() = default;
  // The tools of the ready servers that their configuration lets through, in a fixed order.
  McpTools(const McpServers& servers, const std::map<std::string, McpServerConfig>& configs);

  const std::vector<ToolSpec>& specs() const { return specs_; }
  const Target* find(std::string_view qualified) const;
  // What the start-up looked like: one mcp_startup_update per server, mcp_startup_complete,
  // and a warning per tool left out or renamed.
  std::vector<EventMsg> startup_events() const;
  // The tool list for `list_mcp_tools`.
  McpListToolsResponseEvent listing() const;

 private:
  std::vector<ToolSpec> specs_;
  std::map<std::string, Target, std::less<>> targets_;
  std::vector<McpServerStatus> servers_;  // without their tools (kept in targets_)
  std::map<std::string, size_t> offered_;  // per server
  std::map<std::string, RawJson> listing_;
  std::vector<std::string> warnings_;
};

// The model's arguments for a call: blank means none; otherwise they must be JSON (the error
// text is the tool output, engine.md §10.4).
struct McpArguments {
  std::optional<RawJson> value;
  std::optional<std::string> error;
};
McpArguments mcp_arguments(std::string_view text);

// mcp_tool_call_end for a finished call, and what the model sees of it.
struct McpCallEnd {
  McpToolCallEndEvent event;
  std::string output;
  bool success = false;
  std::optional<std::vector<ContentItem>> parts;
};
McpCallEnd mcp_call_end(const std::string& call_id, McpInvocation invocation, std::chrono::nanoseconds duration,
                        const McpCallResult& result);

}  // namespace llmx
