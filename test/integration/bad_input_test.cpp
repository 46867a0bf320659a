// `llmx mcp-server` under hostile or broken input: every request gets exactly one reply
// (DECISIONS P2), a closed stdin ends the process cleanly, a silent model cannot hang a call.
#include <doctest/doctest.h>

#include <chrono>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

// The only message the server writes in reply to `line`, which must be an error with `code`.
Message expect_error_reply(McpClient& mcp, std::string_view line, int code) {
  const size_t before = mcp.log().size();
  mcp.send_line(line);
  // A ping behind it proves the server read past the bad line and said nothing else.
  auto ping = mcp.request("ping");
  mcp.wait_for_response(ping);
  REQUIRE(mcp.log().size() == before + 2);
  const Message& err = mcp.log()[before];
  INFO(err.line());
  REQUIRE(err.is_error());
  CHECK(err.text("/jsonrpc") == "\"2.0\"");
  CHECK(err.integer("/error/code") == code);
  CHECK_FALSE(err.str("/error/message").empty());
  return err;
}

}  // namespace

TEST_CASE("bad input: malformed JSON gets -32700 with a null id") {
  InitializedMcp f;
  auto err = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":5,"method":"ping")", -32700);
  CHECK(err.text("/id") == "null");
  auto err2 = expect_error_reply(f.mcp, "this is not json", -32700);
  CHECK(err2.text("/id") == "null");
}

TEST_CASE("bad input: JSON that is not an object gets -32600") {
  InitializedMcp f;
  for (std::string_view line : {"[1,2,3]", "42", R"("ping")", "null"}) {
    CAPTURE(line);
    auto err = expect_error_reply(f.mcp, line, -32600);
    CHECK(err.text("/id") == "null");
  }
  // An object that is no JSON-RPC message, and a request whose method is not a string.
  expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":3})", -32600);
  auto bad_method = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":4,"method":17})", -32600);
  CHECK(bad_method.id() == "4");
}

TEST_CASE("bad input: an unknown method gets -32601 with the request id") {
  InitializedMcp f;
  auto err = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":11,"method":"no/such/method","params":{}})", -32601);
  CHECK(err.id() == "11");
  CHECK(err.str("/error/message").find("no/such/method") != std::string::npos);
  auto err2 = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":"s-1","method":"tools/explode"})", -32601);
  CHECK(err2.id() == R"("s-1")");
  // An unknown notification gets nothing at all.
  const size_t before = f.mcp.log().size();
  f.mcp.notify("notifications/whatever", "{}");
  f.mcp.wait_for_response(f.mcp.request("ping"));
  CHECK(f.mcp.log().size() == before + 1);
}

TEST_CASE("bad input: wrong params get -32602 naming the field") {
  McpServerFixture f;
  // Before initialize: initialize itself with a mistyped field.
  auto init = expect_error_reply(
      f.mcp, R"({"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":2025,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      -32602);
  CHECK(init.id() == "10");
  CHECK(init.str("/error/message").find("protocolVersion") != std::string::npos);
  f.mcp.initialize();  // the failed one did not count
  auto err = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}})", -32602);
  CHECK(err.id() == "12");
  CHECK(err.str("/error/message").find("name") != std::string::npos);
  auto missing = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{}})", -32602);
  CHECK(missing.str("/error/message").find("name") != std::string::npos);
  auto meta = expect_error_reply(
      f.mcp, R"({"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"llmx","arguments":{"prompt":"x"},"_meta":5}})",
      -32602);
  CHECK(meta.str("/error/message").find("_meta") != std::string::npos);
}

TEST_CASE("bad input: CRLF line endings and several lines in one write are accepted") {
  InitializedMcp f;
  REQUIRE(f.mcp.process().write_stdin("{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"ping\"}\r\n"
                                      "\n"
                                      "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\"}\r\n"));
  CHECK(f.mcp.wait_for_response("41").text("/result") == "{}");
  CHECK(f.mcp.wait_for_response("42").text("/result") == "{}");
  f.mcp.drain(100ms);
  CHECK(f.mcp.log().size() == 3);  // initialize + two pings: the empty line gets nothing
}

TEST_CASE("bad input: features the server did not declare are -32601, not empty answers") {
  InitializedMcp f;
  auto init = f.mcp.log().front();
  for (const char* cap : {"/result/capabilities/resources", "/result/capabilities/prompts", "/result/capabilities/completions"})
    CHECK_FALSE(init.has(cap));
  const std::vector<std::pair<std::string, std::string>> undeclared = {
      {"resources/list", "{}"},          {"resources/templates/list", ""},
      {"prompts/list", ""},
      {"resources/read", R"({"uri":"file:///x"})"},
      {"resources/subscribe", R"({"uri":"file:///x"})"},
      {"resources/unsubscribe", R"({"uri":"file:///x"})"},
      {"prompts/get", R"({"name":"greeting","arguments":{"who":"me"}})"},
      {"completion/complete", R"({"ref":{"type":"ref/prompt","name":"g"},"argument":{"name":"who","value":"m"}})"}};
  for (const auto& [method, params] : undeclared) {
    const auto& shown_method = method;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_method);
    auto resp = f.mcp.wait_for_response(f.mcp.request(method, params));
    REQUIRE(resp.is_error());
    CHECK(resp.integer("/error/code") == -32601);
  }
  // What is declared still answers.
  CHECK_FALSE(f.mcp.wait_for_response(f.mcp.request("logging/setLevel", R"({"level":"debug"})")).is_error());
}

TEST_CASE("bad input: a line over the size limit gets -32600 and the next request still works") {
  InitializedMcp f({.env = {{"LLMX_MAX_LINE_BYTES", "1000"}}});
  // A valid request, only too long: a reply other than -32600 would mean the limit was ignored.
  std::string line = R"({"jsonrpc":"2.0","id":21,"method":"ping","params":{"pad":")";
  line += std::string(5000 - line.size() - 3, 'x');
  line += R"("}})";
  REQUIRE(line.size() == 5000);
  auto err = expect_error_reply(f.mcp, line, -32600);
  CHECK(err.text("/id") == "null");
  CHECK(err.str("/error/message").find("1000") != std::string::npos);
  CHECK(f.mcp.responses_for("21").empty());
  // Lines under the limit are served as usual.
  auto id = f.mcp.call_llmx("@mock:echo small enough");
  CHECK(result_text(f.mcp.wait_for_response(id)) == "echo: small enough");
}

TEST_CASE("bad input: stdin closed in the middle of a line ends the process cleanly") {
  InitializedMcp f;
  REQUIRE(f.mcp.process().write_stdin(R"({"jsonrpc":"2.0","id":31,"method":"pi)"));
  f.mcp.close_stdin();
  auto st = f.mcp.wait_exit(5s);
  INFO(f.mcp.diagnostics());
  CHECK(st.describe() == "exit code 0");
  CHECK(f.mcp.responses_for("31").empty());
  // Whatever it wrote was whole JSON lines (the client parses each one).
  for (const auto& m : f.mcp.log()) CHECK(m.text("/jsonrpc") == "\"2.0\"");
}

TEST_CASE("bad input: a last request without a newline before EOF is still answered") {
  InitializedMcp f;
  REQUIRE(f.mcp.process().write_stdin(R"({"jsonrpc":"2.0","id":32,"method":"ping"})"));
  f.mcp.close_stdin();
  auto st = f.mcp.wait_exit(5s);
  INFO(f.mcp.diagnostics());
  CHECK(st.describe() == "exit code 0");
  REQUIRE(f.mcp.responses_for("32").size() == 1);
  CHECK(f.mcp.responses_for("32")[0].text("/result") == "{}");
}

TEST_CASE("bad input: stdin closed while a slow turn runs ends the process within seconds") {
  InitializedMcp f;
  // ~14 s if it ran to the end.
  auto id = f.mcp.call_llmx("@mock:slow delay_ms=2000 deltas=5");
  f.mcp.wait_for([&](const Message& m) { return m.event_request_id() == id && m.event_type() == "task_started"; },
                 "task_started");
  const auto t0 = std::chrono::steady_clock::now();
  f.mcp.close_stdin();
  auto st = f.mcp.wait_exit(8s);
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(f.mcp.diagnostics());
  CHECK(st.describe() == "exit code 0");
  CHECK(took < 5s);
  CHECK(f.mcp.responses_for(id).size() <= 1);
}

TEST_CASE("bad input: a model that never answers hits the idle timeout while another conversation completes") {
  TempDir home{"llmx-idle"};
  MockLlm mock;
  home.write("config.toml", "model_provider = \"mock\"\n"
                            "[model_providers.mock]\n"
                            "name = \"mock\"\n"
                            "base_url = \"" + mock.url() + "\"\n"
                            "env_key = \"LLMX_API_KEY\"\n"
                            "stream_idle_timeout_ms = 500\n"
                            "stream_max_retries = 0\n");
  McpClient mcp(home.path(), "http://127.0.0.1:9/v1");  // LLMX_BASE_URL unused: the provider is `mock`
  mcp.initialize();
  const auto t0 = std::chrono::steady_clock::now();
  auto hang = mcp.call_llmx("@mock:hang");
  auto other = mcp.call_llmx("@mock:slow delay_ms=150 deltas=4");
  auto r_hang = mcp.wait_for_response(hang, 8s);
  const auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(r_hang.is_error());
  CHECK(result_is_error(r_hang));
  CHECK(result_text(r_hang).find("idle timeout") != std::string::npos);
  CHECK(took < 4s);
  auto r_other = mcp.wait_for_response(other);
  CHECK_FALSE(result_is_error(r_other));
  CHECK(result_text(r_other) == kMockAnswer);
  // Both requests went to the provider from config.toml.
  CHECK(Message(mock.requests_json()).at("/requests").get_array().value_unsafe().size() == 2);
}

TEST_CASE("bad input: a client that hangs up right after initialize, over and over, never crashes the server") {
  // Regression: exiting while libcurl was still loading in the background ran OpenSSL's exit
  // handlers under the loading thread (about one crash in a hundred quick start/stop cycles).
  // With conversations on nodes each cycle also starts two node processes, so fewer cycles.
  MockLlm mock;
  TempDir home;
  // Under the sanitizers each start and exit is slow enough that 150 cycles do not fit the case's
  // time; the race itself is the Release tree's to catch.
  const int cycles = streaming_processes() > 1 || kSlowdown > 1 ? 30 : 150;
  for (int i = 0; i < cycles; ++i) {
    McpClient mcp(home.path(), mock.url());
    mcp.initialize();
    mcp.close_stdin();
    auto st = mcp.wait_exit(5s * kSlowdown);
    INFO("cycle " << i << ": " << mcp.diagnostics());
    REQUIRE(st.describe() == "exit code 0");
  }
}

TEST_CASE("bad input: valid JSON with numbers beyond 64 bits or lone surrogates is answered with its own id") {
  InitializedMcp f;
  // Values simdjson cannot hold as written are read anyway (as a float, a string, U+FFFD).
  f.mcp.send_line(
      R"({"jsonrpc":"2.0","id":61,"method":"ping","params":{"_meta":{"n":123456789012345678901234567890,"x":1e400,"s":"a\uD800b\uDC00"}}})");
  CHECK(f.mcp.wait_for_response("61").text("/result") == "{}");
  // A huge id comes back exactly as sent.
  f.mcp.send_line(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})");
  auto big = f.mcp.wait_for_response("123456789012345678901234567890");
  CHECK(contains(big.line(), R"("id":123456789012345678901234567890)"));
  // A field that needs another type is -32602 naming it, with the request's id.
  auto err = expect_error_reply(
      f.mcp, R"({"jsonrpc":"2.0","id":62,"method":"tools/call","params":{"name":123456789012345678901234567890}})", -32602);
  CHECK(err.id() == "62");
  CHECK(contains(err.str("/error/message"), "name"));
  // A float id stays refused (JSON-RPC ids are integers or strings), huge or not.
  auto float_id = expect_error_reply(f.mcp, R"({"jsonrpc":"2.0","id":1e400,"method":"ping"})", -32600);
  CHECK(float_id.text("/id") == "null");
}

TEST_CASE("bad input: a line of JSON whitespace is ignored, not answered") {
  InitializedMcp f;
  const size_t before = f.mcp.log().size();
  f.mcp.send_line(" \t  ");
  f.mcp.send_line("\r");
  f.mcp.wait_for_response(f.mcp.request("ping"));
  CHECK(f.mcp.log().size() == before + 1);  // only the ping's answer
}
