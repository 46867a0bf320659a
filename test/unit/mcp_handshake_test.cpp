// MCP's handshake as plain code (protocol/rpc/mcp_handshake.hpp): what `initialize` decides, and
// the first line of a stdio session answered before the engine starts, or left to the session.
#include <doctest/doctest.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/mcp_handshake.hpp"

using namespace llmx;

namespace {
const char* const kInit =
    R"({"jsonrpc":"2.0","id":ID,"method":"initialize","params":{"protocolVersion":"VERSION",)"
    R"("capabilities":{"elicitation":{}},"clientInfo":{"name":"host","version":"2.1"}}})";

std::string init_line(std::string_view id, std::string_view version) {
  std::string s = kInit;
  s.replace(s.find("ID"), 2, id);
  s.replace(s.find("VERSION"), 7, version);
  return s;
}
}  // namespace

TEST_CASE("mcp handshake: initialize negotiates the version and keeps what the client declared") {
  mcp::InitializeParams p;
  p.protocolVersion = "1999-01-01";
  p.clientInfo = {"host", "2.1", std::nullopt};
  p.capabilities.text = R"({"elicitation":{"form":{}}})";
  auto h = mcp::handshake_of(p);
  CHECK(h.protocol_version == std::string(mcp::kLatestProtocolVersion));
  CHECK(h.client_suffix == "host; 2.1");
  CHECK(h.client_caps.elicitation_form);
  CHECK(mcp::initialize_result(h, true).tasks);
  CHECK_FALSE(mcp::initialize_result(h, false).tasks);
  h.protocol_version = "2025-06-18";  // before tasks
  CHECK_FALSE(mcp::initialize_result(h, true).tasks);
  CHECK(mcp::initialize_result(h, true).user_agent.ends_with("(host; 2.1)"));
}

TEST_CASE("mcp handshake: a first line that is initialize is answered with its own id") {
  json::Parser parser;
  for (std::string id : {"1", R"("abc")", "123456789012345678901234567890"}) {
    CAPTURE(id);
    auto early = mcp::answer_initialize_line(init_line(id, "2025-06-18"), true);
    REQUIRE(early);
    auto reply = parser.parse(early->reply);  // one JSON object
    CHECK(reply.is_object());
    CHECK(early->reply.starts_with(R"({"jsonrpc":"2.0",)"));
    CHECK(early->reply.find(R"("id":)" + id + ",") != std::string::npos);
    CHECK(early->reply.find(R"("protocolVersion":"2025-06-18")") != std::string::npos);
    CHECK(early->reply.find("(host; 2.1)") != std::string::npos);
    CHECK(early->reply.find('\n') == std::string::npos);
    CHECK(early->handshake.client_caps.elicitation_form);
    CHECK(early->handshake.protocol_version == "2025-06-18");
  }
  auto latest = mcp::answer_initialize_line(init_line("2", "2025-11-25"), true);
  REQUIRE(latest);
  CHECK(latest->reply.find(R"("tasks":)") != std::string::npos);
}

TEST_CASE("mcp handshake: anything else on the first line is left to the session") {
  auto left = [](std::string_view line) { return !mcp::answer_initialize_line(line, true).has_value(); };
  CHECK(left(""));
  CHECK(left("not json"));
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"));
  // A notification, a response, a batch: not a request to answer.
  CHECK(left(R"({"jsonrpc":"2.0","method":"initialize","params":{}})"));
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  CHECK(left("[" + init_line("1", "2025-06-18") + "]"));
  CHECK(left(init_line("null", "2025-06-18")));  // a null id: the session's error, as ever
  // Params the session refuses with -32602 (a missing or mistyped field).
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})"));
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7,"capabilities":{},)"
             R"("clientInfo":{"name":"h","version":"1"}}})"));
  // A 2026-07-28 request names its version in _meta: the session serves it statelessly.
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
             R"("capabilities":{},"clientInfo":{"name":"h","version":"1"},)"
             R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})"));
}
