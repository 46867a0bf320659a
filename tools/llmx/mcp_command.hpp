// `llmx mcp add|list|get|remove`: manage the MCP servers llmx connects to, the
// `[mcp_servers.<name>]` tables of $LLMX_HOME/config.toml (engine.md §10.1). Writes keep the rest
// of the file as it was (protocol/config/config_write.hpp).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace llmx::cli {

// Registers `mcp` and its subcommands on `app`:
//   mcp add <name> [--env K=V]... -- <command> [args...]    (or --url URL [--bearer-token-env-var V])
//   mcp list [--json]
//   mcp get <name> [--json]
//   mcp remove <name>
// They run from CLI11 callbacks while `app` parses: success lets the parse finish (main finds
// nothing else to run and returns 0); a failure prints to stderr and throws
// CLI::RuntimeError(1), which CLI11_PARSE returns as the exit code. `config_overrides` is the
// root `-c` list (bound by main), applied when `list` and `get` load the configuration.
void add_mcp_command(CLI::App& app, std::vector<std::string>& config_overrides);

}  // namespace llmx::cli
