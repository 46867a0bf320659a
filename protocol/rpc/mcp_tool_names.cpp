#include "protocol/rpc/mcp_tool_names.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/base/crypto.hpp"

namespace llmx::mcp {

namespace {

constexpr size_t kMaxName = 64;
constexpr size_t kHashedPrefix = 24;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool listed(std::string_view tool, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), tool) != names.end();
}

}  // namespace

bool valid_server_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), name_char);
}

std::string qualified_tool_name(std::string_view server, std::string_view tool) {
  std::string name = fmt::format("mcp__{}__{}", server, tool);
  std::replace_if(name.begin(), name.end(), [](char c) { return !name_char(c); }, '_');
  if (name.size() <= kMaxName) return name;
  return name.substr(0, kHashedPrefix) + crypto::sha1_hex(name);
}

bool tool_allowed(std::string_view tool, const std::optional<std::vector<std::string>>& enabled,
                  const std::optional<std::vector<std::string>>& disabled) {
  if (enabled && !listed(tool, *enabled)) return false;
  return !(disabled && listed(tool, *disabled));
}

std::string ToolNames::add(const std::string& server, const std::string& tool) {
  auto name = qualified_tool_name(server, tool);
  if (by_name_.count(name)) {
    std::string taken = name;
    for (int n = 2;; ++n) {
      auto suffix = fmt::format("_{}", n);
      auto candidate = taken.substr(0, std::min(taken.size(), kMaxName - suffix.size())) + suffix;
      if (!by_name_.count(candidate)) {
        name = candidate;
        break;
      }
    }
    warnings_.push_back(fmt::format("tool `{}` of MCP server `{}` is offered as `{}`: `{}` is taken by another tool",
                                    tool, server, name, taken));
  }
  by_name_.emplace(name, ToolRef{server, tool});
  return name;
}

const ToolRef* ToolNames::find(std::string_view qualified) const {
  auto it = by_name_.find(qualified);
  return it == by_name_.end() ? nullptr : &it->second;
}

}  // namespace llmx::mcp
