// The names under which the tools of configured MCP servers are offered to the model
// (engine.md §10.3): `mcp__<server>__<tool>`, in the characters every provider accepts
// (`^[a-zA-Z0-9_-]{1,64}$`), and the way back from such a name to the server and the tool.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmx::mcp {

// Whether a configured server's name is usable (`^[a-zA-Z0-9_-]+$`).
bool valid_server_name(std::string_view name);

// `mcp__<server>__<tool>` with every other character replaced by `_`; longer than 64 characters,
// its first 24 characters followed by the 40-hex SHA-1 of the full name.
std::string qualified_tool_name(std::string_view server, std::string_view tool);

// Whether a server's `enabled_tools` / `disabled_tools` let a tool through (allow-list first).
bool tool_allowed(std::string_view tool, const std::optional<std::vector<std::string>>& enabled,
                  const std::optional<std::vector<std::string>>& disabled);

struct ToolRef {
  std::string server;
  std::string tool;  // the server's own name for it
  friend bool operator==(const ToolRef&, const ToolRef&) = default;
};

// Every MCP tool the model is offered, by qualified name. Built in a fixed order (servers by
// name, tools as listed), so the same servers always give the same names; a tool whose
// qualified name is already taken gets `_2`, `_3`... (within 64 characters), and the collision
// is reported.
class ToolNames {
 public:
  // Adds a tool; returns its qualified name.
  std::string add(const std::string& server, const std::string& tool);
  const ToolRef* find(std::string_view qualified) const;
  const std::map<std::string, ToolRef, std::less<>>& all() const { return by_name_; }
  // "tool `x` of server `a` is offered as `..._2`: its name collides with another" per collision.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::map<std::string, ToolRef, std::less<>> by_name_;
  std::vector<std::string> warnings_;
};

}  // namespace llmx::mcp
