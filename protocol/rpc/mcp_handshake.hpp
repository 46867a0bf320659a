// MCP's handshake as plain code: what a session keeps from `initialize`, the answer it gives, and
// that answer for a stdio session's first line before the engine exists (issue 18, point 5: the
// client waiting for `initialize` does not wait for the actor system to start).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/rpc/mcp.hpp"

namespace llmx::mcp {

// What a session keeps from `initialize`.
struct Handshake {
  std::string protocol_version;  // negotiated
  std::string client_suffix;     // "name; version": ends our user agent
  ClientCapabilities client_caps;
};

Handshake handshake_of(const InitializeParams& p);
// `tasks_offered`: the server has a task board (tool calls may become tasks).
InitializeResult initialize_result(const Handshake& h, bool tasks_offered);

// `line` answered the way a fresh MCP session answers it, when it is an `initialize` request the
// session would accept: parsed, a request (not a 2026-07-28 stateless one), its params valid.
// Anything else is nullopt, and the session answers it (errors included) as usual.
struct EarlyInitialize {
  Handshake handshake;
  std::string reply;  // the response line, without its newline
};
std::optional<EarlyInitialize> answer_initialize_line(std::string_view line, bool tasks_offered);

}  // namespace llmx::mcp
