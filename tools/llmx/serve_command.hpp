// `llmx mcp-server`: serve a protocol session on stdin/stdout until stdin closes.
#pragma once

#include <string>
#include <vector>

#include "protocol/config/config.hpp"
#include "start/first_line.hpp"

namespace llmx::cli {

struct ServeOptions {
  ConfigOverrides overrides;
  // --nodes A,B,...: place conversations on these worker nodes (else [cluster] nodes, else here).
  std::vector<std::string> nodes;
  // --listen ws://HOST:PORT (app-server) or http://HOST:PORT (mcp-server): network clients
  // instead of stdio (listen_command.hpp).
  std::string listen;
  // What the llmx binary read from stdin (and maybe answered) before it loaded the engine.
  std::optional<FirstLine> first_line;
};

int run_mcp_server(const ServeOptions& options);

// `llmx app-server`: the v1 conversation API and the v2 thread/turn API over stdio.
int run_app_server(const ServeOptions& options);

// `llmx acp`: the Agent Client Protocol v1 over stdio, for editors.
int run_acp(const ServeOptions& options);

// `generate-ts --prettier BIN`: runs `BIN --write <every .ts file under dir>`; its exit code.
int run_prettier(const std::string& prettier, const std::string& dir);

}  // namespace llmx::cli
