// A stdio server's first line, answered before its engine runs: the client's `initialize` does
// not wait for the actor system (issue 18, point 5), nor, when the llmx binary answers it, for
// the engine and CAF to be loaded at all (start/main.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/rpc/handshake.hpp"

namespace llmx::cli {

// The stdio servers.
enum class Front { mcp, app, acp };

// What was read from stdin before the session's reader started.
struct FirstLine {
  std::string answered;  // the client's first line when it was an `initialize` and was answered
  std::string rest;      // every other byte read (all of them when nothing was answered)
};

// Waits for the client's first line on stdin and answers it on stdout when it is an `initialize`
// a fresh session of `front` would accept (protocol/rpc/handshake.hpp).
FirstLine answer_first_line(Front front);

// What the client declared in a line answer_first_line answered.
std::optional<rpc::Handshake> handshake_of(Front front, std::string_view answered);

}  // namespace llmx::cli
