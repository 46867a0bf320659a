// The plain code of the MCP client (issue 13): qualified tool names and their way back, the
// provider-ready input schemas, the handshake and tool list as read from a server, and
// tools/call results made into the model's tool output (engine.md §10).
#include <doctest/doctest.h>

#include <regex>

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_client_api.hpp"
#include "protocol/rpc/mcp_server_launch.hpp"
#include "protocol/rpc/mcp_tool_names.hpp"
#include "protocol/rpc/mcp_tool_schema.hpp"

using namespace llmx;
using namespace llmx::mcp;

namespace {

std::string schema_of(std::string_view in) {
  auto r = provider_schema(RawJson{std::string(in)});
  if (auto* refused = std::get_if<SchemaRefused>(&r)) FAIL("refused: " << refused->reason);
  return std::get<std::string>(r);
}

std::string refusal_of(std::string_view in) {
  auto r = provider_schema(RawJson{std::string(in)});
  REQUIRE(std::holds_alternative<SchemaRefused>(r));
  return std::get<SchemaRefused>(r).reason;
}

json::Element parse(json::Parser& p, std::string_view text) { return p.parse(text); }

}  // namespace

TEST_CASE("mcp client: qualified names fit what providers accept, long ones are hashed like the reference") {
  const std::regex ok("^[a-zA-Z0-9_-]{1,64}$");
  CHECK(qualified_tool_name("fs", "read_file") == "mcp__fs__read_file");
  CHECK(qualified_tool_name("my-server", "get.weather now") == "mcp__my-server__get_weather_now");
  auto long_name = qualified_tool_name("everything", std::string(80, 'x'));
  CHECK(long_name.size() == 64);
  CHECK(std::regex_match(long_name, ok));
  CHECK(long_name.substr(0, 24) == "mcp__everything__xxxxxxx");
  CHECK(long_name == qualified_tool_name("everything", std::string(80, 'x')));  // deterministic
  CHECK(long_name != qualified_tool_name("everything", std::string(81, 'x')));
  CHECK(valid_server_name("a_b-9"));
  CHECK_FALSE(valid_server_name("a b"));
  CHECK_FALSE(valid_server_name(""));
}

TEST_CASE("mcp client: colliding names get numbered suffixes, the mapping leads back to server and tool") {
  ToolNames names;
  CHECK(names.add("a", "do.it") == "mcp__a__do_it");
  CHECK(names.add("a", "do_it") == "mcp__a__do_it_2");  // sanitised to the same name
  CHECK(names.add("a", "do it") == "mcp__a__do_it_3");
  REQUIRE(names.warnings().size() == 2);
  CHECK(names.warnings()[0].find("`do_it` of MCP server `a`") != std::string::npos);
  auto* ref = names.find("mcp__a__do_it_2");
  REQUIRE(ref);
  CHECK(*ref == ToolRef{"a", "do_it"});
  CHECK_FALSE(names.find("mcp__a__nope"));
}

TEST_CASE("mcp client: enabled_tools is an allow-list, then disabled_tools a deny-list") {
  std::optional<std::vector<std::string>> none;
  CHECK(tool_allowed("x", none, none));
  CHECK(tool_allowed("x", std::vector<std::string>{"x"}, none));
  CHECK_FALSE(tool_allowed("y", std::vector<std::string>{"x"}, none));
  CHECK_FALSE(tool_allowed("x", std::vector<std::string>{"x"}, std::vector<std::string>{"x"}));
  CHECK_FALSE(tool_allowed("x", none, std::vector<std::string>{"x"}));
}

TEST_CASE("mcp client: input schemas are reduced to the subset providers accept") {
  // Missing type, integer, sorted properties, required kept only for known properties.
  CHECK(schema_of(R"({"properties":{"b":{"type":"integer","description":"B"},"a":{"enum":["x","y"]}},
                     "required":["b","ghost"]})") ==
        R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number","description":"B"}},"required":["b"]})");
  // An empty schema still describes an object.
  CHECK(schema_of("{}") == R"({"type":"object","properties":{}})");
  // Arrays get items; boolean schemas become strings; unions take the first usable member.
  CHECK(schema_of(R"({"type":"object","properties":{"l":{"type":"array"},"t":true,
                     "u":{"anyOf":[{"type":"null"},{"type":"boolean"}]},"n":{"type":["null","integer"]}}})") ==
        R"({"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}},"n":{"type":"number"},)"
        R"("t":{"type":"string"},"u":{"type":"boolean"}}})");
  // $ref into the schema's own $defs is resolved.
  CHECK(schema_of(R"({"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},
                     "$defs":{"point":{"type":"object","properties":{"x":{"type":"number"}}}}})") ==
        R"({"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"number"}}}}})");
  CHECK(schema_of(R"({"type":"object","additionalProperties":{"type":"string"}})") ==
        R"({"type":"object","properties":{},"additionalProperties":{"type":"string"}})");
}

TEST_CASE("mcp client: schemas providers cannot take are refused with the reason") {
  CHECK(refusal_of(R"({"type":"object","properties":{"p":{"$ref":"https://example.com/s.json"}}})")
            .find("does not define") != std::string::npos);
  CHECK(refusal_of(R"({"type":"string"})").find("not an object") != std::string::npos);
  CHECK(refusal_of("[1]").find("array") != std::string::npos);
  CHECK(refusal_of("{nope").find("not JSON") != std::string::npos);
  std::string huge = R"({"type":"object","description":")" + std::string(kMaxToolSchemaBytes, 'x') + R"("})";
  CHECK(refusal_of(huge).find("bytes") != std::string::npos);
  CHECK(refusal_of(R"({"type":"object","properties":{"p":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/a"}}})")
            .size() > 0);  // a $ref loop ends
}

TEST_CASE("mcp client: the handshake is read, and revisions we do not speak are refused") {
  json::Parser p;
  auto params = client_initialize_params();
  CHECK(params.find(R"("protocolVersion":"2025-11-25")") != std::string::npos);
  CHECK(params.find(R"("elicitation":{})") != std::string::npos);
  CHECK(params.find(R"("name":"llmx-mcp-client")") != std::string::npos);
  auto hello = read_initialize_result(parse(p, R"({"protocolVersion":"2025-03-26","serverInfo":{"name":"ev",
      "version":"1"},"capabilities":{"tools":{"listChanged":true}},"instructions":"be nice"})"));
  REQUIRE(std::holds_alternative<ServerHello>(hello));
  auto& h = std::get<ServerHello>(hello);
  CHECK(h.protocol_version == "2025-03-26");
  CHECK(h.name == "ev");
  CHECK(h.tools);
  CHECK(h.tools_list_changed);
  CHECK(h.instructions == "be nice");
  auto old = read_initialize_result(parse(p, R"({"protocolVersion":"2024-11-05","capabilities":{}})"));
  REQUIRE(std::holds_alternative<std::string>(old));
  CHECK(std::get<std::string>(old).find("2024-11-05") != std::string::npos);
  CHECK(std::holds_alternative<std::string>(read_initialize_result(parse(p, "[]"))));
}

TEST_CASE("mcp client: tool pages keep name, description, schema, read-only hint and cursor") {
  json::Parser p;
  auto page = read_tools_list(parse(p, R"({"tools":[
      {"name":"echo","description":"Echo","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
      {"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}},
      {"description":"nameless"}, 7],"nextCursor":"c2"})"));
  REQUIRE(page.tools.size() == 2);
  CHECK(page.tools[0].name == "echo");
  CHECK(page.tools[0].read_only);
  CHECK(page.tools[0].input_schema.text == R"({"type":"object"})");
  CHECK(page.tools[1].description.empty());
  CHECK_FALSE(page.tools[1].read_only);
  CHECK(page.next_cursor == "c2");
  CHECK(page.skipped.size() == 2);
  CHECK(tool_call_params("add", RawJson{R"({"a":1})"}) == R"({"name":"add","arguments":{"a":1}})");
  CHECK(tool_call_params("ping", std::nullopt) == R"({"name":"ping"})");
}

TEST_CASE("mcp client: call results become the model's tool output as the reference makes them") {
  json::Parser p;
  auto text = tool_output(parse(p, R"({"content":[{"type":"text","text":"hi"}]})"));
  CHECK(text.text == R"([{"type":"text","text":"hi"}])");
  CHECK(text.success);
  CHECK(text.parts.empty());
  auto structured = tool_output(parse(p, R"({"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}})"));
  CHECK(structured.text == R"({"sum":3})");
  auto failed = tool_output(parse(p, R"({"content":[{"type":"text","text":"boom"}],"isError":true})"));
  CHECK_FALSE(failed.success);
  auto image = tool_output(parse(p, R"({"content":[{"type":"text","text":"a cat"},
      {"type":"image","data":"AAAA","mimeType":"image/jpeg"}]})"));
  REQUIRE(image.parts.size() == 2);
  CHECK(image.parts[1].get_if<InputImage>()->image_url == "data:image/jpeg;base64,AAAA");
  auto mixed = tool_output(parse(p, R"({"content":[{"type":"image","data":"AA","mimeType":"image/png"},
      {"type":"resource","resource":{"uri":"file:///x","text":"x"}}]})"));
  CHECK(mixed.parts.empty());  // a resource among them: the JSON text only
}

TEST_CASE("mcp client: a stdio server gets a cleared environment with the reference's variables") {
  McpServerConfig server;
  server.command = "srv";
  server.env_vars = {"MY_TOKEN"};
  server.env = {{"PATH", "/opt/bin"}, {"MODE", "test"}};
  std::map<std::string, std::string> parent = {{"HOME", "/h"},      {"PATH", "/usr/bin"}, {"LANG", "C.UTF-8"},
                                               {"SECRET", "nope"},  {"MY_TOKEN", "t"},    {"LLMX_API_KEY", "k"}};
  auto env = stdio_server_env(server, parent);
  CHECK(env == std::map<std::string, std::string>{
                   {"HOME", "/h"}, {"LANG", "C.UTF-8"}, {"MODE", "test"}, {"MY_TOKEN", "t"}, {"PATH", "/opt/bin"}});
}

TEST_CASE("mcp client: start-up failures are told as the reference tells them") {
  McpServerConfig stdio;
  stdio.command = "srv";
  CHECK(startup_error_message("fs", stdio, "No such file or directory") ==
        "MCP client for `fs` failed to start: No such file or directory");
  stdio.startup_timeout_sec = 2.5;
  CHECK(startup_error_message("fs", stdio, "timed out handshaking with MCP server after 2.5s") ==
        "MCP client for `fs` timed out after 2.5 seconds. Add or adjust `startup_timeout_sec` in your config.toml:\n"
        "[mcp_servers.fs]\nstartup_timeout_sec = XX");
  McpServerConfig http;
  http.url = "https://example.com/mcp";
  CHECK(startup_error_message("x", http, "HTTP 401: Auth required") ==
        "The x MCP server is not logged in. Run `llmx mcp login x`.");
  http.url = "https://api.githubcopilot.com/mcp/";
  CHECK(startup_error_message("gh", http, "HTTP 401").starts_with("GitHub MCP does not support OAuth."));
  http.bearer_token_env_var = "GH_TOKEN";
  CHECK(startup_error_message("gh", http, "HTTP 401") == "MCP client for `gh` failed to start: HTTP 401");
}
