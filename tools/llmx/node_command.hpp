// `llmx node --listen HOST:PORT`: a worker node that hosts conversations for fronts
// (`llmx mcp-server --nodes ...`, `llmx app-server --nodes ...`, embedding hosts) over CAF's
// middleman (issue 15).
#pragma once

#include <string>

namespace llmx::cli {

struct NodeOptions {
  std::string listen = "127.0.0.1:0";  // port 0 picks a free one
  std::string cert, key, cafile;        // TLS (required beyond loopback)
  bool exit_on_stdin_eof = false;       // for supervisors that hold a pipe to the node
};

int run_node(const NodeOptions& options);

}  // namespace llmx::cli
