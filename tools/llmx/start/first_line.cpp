#include "first_line.hpp"

#include <unistd.h>

#include <utility>

#include "protocol/base/files.hpp"
#include "protocol/base/line_cutter.hpp"

namespace llmx::cli {

namespace {

// The answer a fresh session of `front` gives `line`, when the session would accept it.
std::optional<rpc::EarlyAnswer> early_answer(Front front, std::string_view line) {
  switch (front) {
    case Front::mcp: return rpc::answer_mcp_initialize(line, true);  // over stdio MCP has its task board
    case Front::app: return rpc::answer_app_initialize(line);
    case Front::acp: return rpc::answer_acp_initialize(line);
  }
  return std::nullopt;
}

}  // namespace

FirstLine answer_first_line(Front front) {
  const uint64_t limit = max_line_bytes();
  FirstLine out{{}, files::read_first_line(STDIN_FILENO, limit)};
  const auto nl = out.rest.find('\n');
  if (nl == std::string::npos) return out;
  // Cut as the stdin reader cuts it (a trailing '\r' dropped, an oversized line refused).
  std::optional<std::string> line;
  LineCutter(limit).feed(std::string_view(out.rest).substr(0, nl + 1), [&](std::string& l) { line = std::move(l); },
                         [] {});
  if (!line) return out;
  auto early = early_answer(front, *line);
  if (!early) return out;
  files::write_all(STDOUT_FILENO, early->reply + "\n");  // a client already gone: the writer finds out
  out.answered = std::move(*line);
  out.rest.erase(0, nl + 1);
  return out;
}

std::optional<rpc::Handshake> handshake_of(Front front, std::string_view answered) {
  auto early = early_answer(front, answered);
  if (!early) return std::nullopt;
  return std::move(early->handshake);
}

}  // namespace llmx::cli
