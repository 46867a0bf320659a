#include "protocol/rpc/mcp_server_launch.hpp"

#include <fmt/format.h>

namespace llmx::mcp {

std::map<std::string, std::string> stdio_server_env(const McpServerConfig& server,
                                                    const std::map<std::string, std::string>& parent) {
  std::map<std::string, std::string> env;
  auto pass = [&](const std::string& name) {
    if (auto it = parent.find(name); it != parent.end()) env[name] = it->second;
  };
  for (const char* name : {"HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL",
                           "TERM", "TMPDIR", "TZ"})
    pass(name);
  for (const auto& name : server.env_vars) pass(name);
  for (const auto& [k, v] : server.env) env[k] = v;
  return env;
}

std::string startup_error_message(const std::string& name, const McpServerConfig& server, const std::string& error) {
  if (server.url && server.url->starts_with("https://api.githubcopilot.com/mcp") && !server.bearer_token_env_var &&
      server.http_headers.empty() && server.env_http_headers.empty())
    return fmt::format("GitHub MCP does not support OAuth. Log in by adding a personal access token "
                       "(https://github.com/settings/personal-access-tokens) to your environment and config.toml:\n"
                       "[mcp_servers.{}]\nbearer_token_env_var = LLMX_GITHUB_PERSONAL_ACCESS_TOKEN",
                       name);
  if (error.find("Auth required") != std::string::npos)
    return fmt::format("The {} MCP server is not logged in. Run `llmx mcp login {}`.", name, name);
  if (error.find("request timed out") != std::string::npos ||
      error.find("timed out handshaking with MCP server") != std::string::npos)
    return fmt::format("MCP client for `{}` timed out after {} seconds. Add or adjust `startup_timeout_sec` in your "
                       "config.toml:\n[mcp_servers.{}]\nstartup_timeout_sec = XX",
                       name, server.startup_timeout(), name);
  return fmt::format("MCP client for `{}` failed to start: {}", name, error);
}

}  // namespace llmx::mcp
