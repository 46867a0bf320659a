// How a configured MCP server is started and what its user is told when it cannot be
// (engine.md §10.2, §10.5): the environment of a stdio server, and the start-up error messages.
#pragma once

#include <map>
#include <string>

#include "protocol/config/config.hpp"

namespace llmx::mcp {

// A stdio server's environment: cleared, then the parent's HOME, LOGNAME, PATH, SHELL, USER,
// __CF_USER_TEXT_ENCODING, LANG, LC_ALL, TERM, TMPDIR and TZ (those set), the parent's values of
// the server's `env_vars`, and its `env` entries last. `parent` is the server's environment.
std::map<std::string, std::string> stdio_server_env(const McpServerConfig& server,
                                                    const std::map<std::string, std::string>& parent);

// The error event text for a server that failed to start, from the failure's own text.
std::string startup_error_message(const std::string& name, const McpServerConfig& server, const std::string& error);

}  // namespace llmx::mcp
