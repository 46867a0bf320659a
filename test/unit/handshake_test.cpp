// The stdio servers' handshakes as plain code (protocol/rpc/handshake.hpp): what `initialize`
// decides, and a session's first line answered before the engine starts, or left to the session.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/handshake.hpp"

using namespace llmx;

namespace {
std::string mcp_init(std::string_view id, std::string_view version) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"initialize","params":{{"protocolVersion":"{}",)"
                     R"("capabilities":{{"elicitation":{{}}}},"clientInfo":{{"name":"host","version":"2.1"}}}}}})",
                     id, version);
}
}  // namespace

TEST_CASE("handshake: MCP's initialize negotiates the version and keeps what the client declared") {
  mcp::InitializeParams p;
  p.protocolVersion = "1999-01-01";
  p.clientInfo = {"host", "2.1", std::nullopt};
  p.capabilities.text = R"({"elicitation":{"form":{}}})";
  auto h = rpc::mcp_handshake(p);
  CHECK(h.protocol_version == std::string(mcp::kLatestProtocolVersion));
  CHECK(h.client_suffix == "host; 2.1");
  CHECK(h.client_caps.elicitation_form);
  CHECK(rpc::mcp_initialize_result(h, true).tasks);
  CHECK_FALSE(rpc::mcp_initialize_result(h, false).tasks);
  h.protocol_version = "2025-06-18";  // before tasks
  CHECK_FALSE(rpc::mcp_initialize_result(h, true).tasks);
  CHECK(rpc::mcp_initialize_result(h, true).user_agent.ends_with("(host; 2.1)"));
}

TEST_CASE("handshake: an MCP first line that is initialize is answered with its own id") {
  json::Parser parser;
  for (std::string id : {"1", R"("abc")", "123456789012345678901234567890"}) {
    CAPTURE(id);
    auto early = rpc::answer_mcp_initialize(mcp_init(id, "2025-06-18"), true);
    REQUIRE(early);
    CHECK(parser.parse(early->reply).is_object());
    CHECK(early->reply.starts_with(R"({"jsonrpc":"2.0","id":)" + id + ","));
    CHECK(early->reply.find(R"("protocolVersion":"2025-06-18")") != std::string::npos);
    CHECK(early->reply.find("(host; 2.1)") != std::string::npos);
    CHECK(early->reply.find('\n') == std::string::npos);
    auto& h = std::get<rpc::McpHandshake>(early->handshake);
    CHECK(h.client_caps.elicitation_form);
    CHECK(h.protocol_version == "2025-06-18");
  }
  auto latest = rpc::answer_mcp_initialize(mcp_init("2", "2025-11-25"), true);
  REQUIRE(latest);
  CHECK(latest->reply.find(R"("tasks":)") != std::string::npos);
}

TEST_CASE("handshake: anything else on an MCP first line is left to the session") {
  auto left = [](std::string_view line) { return !rpc::answer_mcp_initialize(line, true).has_value(); };
  CHECK(left(""));
  CHECK(left("not json"));
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"));
  // A notification, a response, a batch: not a request to answer.
  CHECK(left(R"({"jsonrpc":"2.0","method":"initialize","params":{}})"));
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  CHECK(left("[" + mcp_init("1", "2025-06-18") + "]"));
  CHECK(left(mcp_init("null", "2025-06-18")));  // a null id: the session's error, as ever
  // Params the session refuses with -32602 (a missing or mistyped field).
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})"));
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7,"capabilities":{},)"
             R"("clientInfo":{"name":"h","version":"1"}}})"));
  // A 2026-07-28 request names its version in _meta: the session serves it statelessly.
  CHECK(left(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
             R"("capabilities":{},"clientInfo":{"name":"h","version":"1"},)"
             R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})"));
}

TEST_CASE("handshake: the app server's first initialize is answered without \"jsonrpc\"") {
  auto early = rpc::answer_app_initialize(R"({"id":7,"method":"initialize","params":{"clientInfo":{"name":"ide","version":"4"}}})");
  REQUIRE(early);
  CHECK(early->reply.starts_with(R"({"id":7,"result":{"userAgent":)"));
  CHECK(early->reply.find("(ide; 4)") != std::string::npos);
  CHECK(std::get<rpc::AppHandshake>(early->handshake).client_suffix == "ide; 4");
  CHECK(rpc::app_initialize_result(rpc::AppHandshake{"ide; 4"}).userAgent.ends_with("(ide; 4)"));
  CHECK_FALSE(rpc::answer_app_initialize(R"({"id":7,"method":"initialize","params":{}})"));  // clientInfo is required
  CHECK_FALSE(rpc::answer_app_initialize(R"({"id":7,"method":"thread/start","params":{}})"));
}

TEST_CASE("handshake: ACP's first initialize is answered and the editor's file capabilities kept") {
  auto early = rpc::answer_acp_initialize(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,)"
      R"("clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false}}}})");
  REQUIRE(early);
  CHECK(early->reply == R"({"jsonrpc":"2.0","id":0,"result":)" + acp::initialize_result() + "}");
  auto& caps = std::get<rpc::AcpHandshake>(early->handshake).client_caps;
  CHECK(caps.read_text_file);
  CHECK_FALSE(caps.write_text_file);
  CHECK(rpc::answer_acp_initialize(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}})"));
  CHECK_FALSE(rpc::answer_acp_initialize(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})"));  // protocolVersion is required
  CHECK_FALSE(rpc::answer_acp_initialize(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"one"}})"));
}
