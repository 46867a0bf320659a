// Which command lines are a stdio server the llmx binary may start before loading the engine:
// only forms the engine's command line (entry.cpp) certainly accepts. Anything else (a flag this
// does not know, --listen, --nodes, --help) is left to the engine, which then answers the first
// line itself: slower, never different.
#pragma once

#include <optional>

#include "first_line.hpp"
#include "protocol/config/config.hpp"

namespace llmx::cli {

struct EarlyCommand {
  Front front;
  ConfigOverrides overrides;  // the global `-c` overrides first, as the engine orders them
};

// `argv` as main() got it, after `llmx-mcp-server` became `llmx mcp-server`.
std::optional<EarlyCommand> early_command(int argc, const char* const* argv);

}  // namespace llmx::cli
