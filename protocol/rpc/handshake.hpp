// The stdio servers' handshakes as plain code: what each server's `initialize` keeps for its
// session and answers, and a session's first line answered before the actors exist (issue 18,
// point 5: a client waiting for `initialize` does not wait for the actor system to start).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/rpc/acp.hpp"
#include "protocol/rpc/mcp.hpp"
#include "protocol/rpc/v2_api.hpp"

namespace llmx::rpc {

// MCP: the version negotiated, the client's name and version (they end our user agent) and what
// it can do.
struct McpHandshake {
  std::string protocol_version;
  std::string client_suffix;  // "name; version"
  mcp::ClientCapabilities client_caps;
};
McpHandshake mcp_handshake(const mcp::InitializeParams& p);
// `tasks_offered`: the server has a task board (tool calls may become tasks).
mcp::InitializeResult mcp_initialize_result(const McpHandshake& h, bool tasks_offered);

// The app server: the client's name and version.
struct AppHandshake {
  std::string client_suffix;  // "name; version"
};
AppHandshake app_handshake(const v2::InitializeParams& p);
v2::InitializeResult app_initialize_result(const AppHandshake& h);

// ACP: what the editor does for the agent (its files).
struct AcpHandshake {
  acp::ClientCapabilities client_caps;
};
AcpHandshake acp_handshake(const acp::InitializeParams& p);

using Handshake = std::variant<McpHandshake, AppHandshake, AcpHandshake>;

// A first line answered the way a fresh session of that server answers it, when it is an
// `initialize` request the session would accept: parsed, a request (for MCP not a 2026-07-28
// stateless one), its params valid. Anything else is nullopt, and the session answers it (errors
// included) as usual.
struct EarlyAnswer {
  Handshake handshake;
  std::string reply;  // the response line, without its newline
};
std::optional<EarlyAnswer> answer_mcp_initialize(std::string_view line, bool tasks_offered);
std::optional<EarlyAnswer> answer_app_initialize(std::string_view line);
std::optional<EarlyAnswer> answer_acp_initialize(std::string_view line);

}  // namespace llmx::rpc
