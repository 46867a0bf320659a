// What a configured MCP server sends our client (protocol/rpc/mcp_connection.hpp,
// mcp_client_api.hpp). The input is the server's lines ('\n'); each goes to
// mcp::Connection::on_message after start() and one queued tool call, so the handshake, listing
// and call states are all reachable (our ids are 0, 1, 2...). A few lines are the client's own
// moves instead: "!call", "!ping", "!abandon", "!answer", "!fail". Each line also goes straight to
// the result decoders (read_initialize_result, read_tools_list, tool_output, read_call_end),
// which report a field of the wrong type with json::DecodeError.
#include <string>

#include "fuzz_input.hpp"
#include "protocol/rpc/mcp_client_api.hpp"
#include "protocol/rpc/mcp_connection.hpp"

using namespace llmx;

namespace {

void decoders(std::string_view line) {
  json::Parser parser;
  try {
    auto root = parser.parse(line);
    // A response's result is what the decoders get; any other value is taken as one.
    json::Element result = root;
    if (root.is_object())
      if (auto r = json::get(root.get_object().value_unsafe(), "result")) result = *r;
    mcp::read_initialize_result(result);
    mcp::read_tools_list(result);
    mcp::tool_output(result);
  } catch (const json::DecodeError&) {
  }
  try {
    mcp::read_call_end(line);
  } catch (const json::DecodeError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mcp::Connection conn;
  mcp::Connection::Output out;
  conn.start(out);
  uint64_t call = conn.call("echo", RawJson{R"({"text":"hi"})"}, out);
  for (auto line : fuzz::split(fuzz::text_of(data, size), "\n")) {
    if (line == "!call") {
      call = conn.call("echo", std::nullopt, out);
    } else if (line == "!ping") {
      conn.ping(out);
    } else if (line == "!abandon") {
      conn.abandon(call, "timed out", out);
    } else if (line == "!answer") {
      if (!out.elicitations.empty()) conn.answer(out.elicitations.back().id, R"({"action":"accept"})", out);
    } else if (line == "!fail") {
      conn.fail("the server exited", out);
    } else {
      conn.on_message(line, out);
      decoders(line);
    }
  }
  return 0;
}
