// One MCP client connection as plain code (protocol/rpc/mcp_connection.hpp): the handshake with
// every tools/list page, ids matched to what they answer, calls queued until ready, progress,
// abandoned calls, the server's own requests, list_changed and a dying transport.
#include <doctest/doctest.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_connection.hpp"

using namespace llmx;
using namespace llmx::mcp;

namespace {

struct Sent {
  json::Parser parser;
  json::Element root;
  explicit Sent(const std::string& line) { root = parser.parse(line); }
  std::string str(std::string_view ptr) { return std::string(root.at_pointer(ptr).get_string().value()); }
  int64_t num(std::string_view ptr) { return root.at_pointer(ptr).get_int64().value(); }
  bool has(std::string_view ptr) { return root.at_pointer(ptr).error() == simdjson::SUCCESS; }
};

std::string result(int64_t id, std::string_view body) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"result":{}}})", id, body);
}

constexpr std::string_view kHello =
    R"({"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"demo","version":"1"}})";

// A connection through its handshake with the given tool pages.
Connection ready_with(std::vector<std::string> pages) {
  Connection c;
  Connection::Output out;
  c.start(out);
  c.on_message(result(0, kHello), out);
  for (size_t i = 0; i < pages.size(); ++i) c.on_message(result(static_cast<int64_t>(i + 1), pages[i]), out);
  REQUIRE(c.phase() == Connection::Phase::ready);
  return c;
}

}  // namespace

TEST_CASE("mcp connection: initialize, initialized, then every tools/list page until ready") {
  Connection c;
  Connection::Output out;
  c.start(out);
  REQUIRE(out.messages.size() == 1);
  Sent init(out.messages[0]);
  CHECK(init.str("/method") == "initialize");
  CHECK(init.num("/id") == 0);
  CHECK(init.str("/params/protocolVersion") == "2025-11-25");
  CHECK(c.phase() == Connection::Phase::initializing);

  out = {};
  c.on_message(result(0, kHello), out);
  REQUIRE(out.messages.size() == 2);
  CHECK(Sent(out.messages[0]).str("/method") == "notifications/initialized");
  Sent list1(out.messages[1]);
  CHECK(list1.str("/method") == "tools/list");
  CHECK_FALSE(list1.has("/params/cursor"));

  out = {};
  c.on_message(result(1, R"({"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"})"), out);
  REQUIRE(out.messages.size() == 1);
  CHECK(Sent(out.messages[0]).str("/params/cursor") == "p2");
  CHECK_FALSE(out.became_ready);

  out = {};
  c.on_message(result(2, R"({"tools":[{"name":"b","annotations":{"readOnlyHint":true}}]})"), out);
  CHECK(out.became_ready);
  CHECK(c.phase() == Connection::Phase::ready);
  REQUIRE(c.tools().size() == 2);
  CHECK(c.tools()[1].read_only);
  CHECK(c.hello().name == "demo");
}

TEST_CASE("mcp connection: a repeated cursor ends the listing instead of looping") {
  Connection c;
  Connection::Output out;
  c.start(out);
  c.on_message(result(0, kHello), out);
  c.on_message(result(1, R"({"tools":[{"name":"a"}],"nextCursor":"x"})"), out);
  out = {};
  c.on_message(result(2, R"({"tools":[{"name":"b"}],"nextCursor":"x"})"), out);
  CHECK(out.became_ready);
  CHECK(c.tools().size() == 2);
  CHECK_FALSE(out.notes.empty());
}

TEST_CASE("mcp connection: a refused initialize or an unknown revision fails the handshake") {
  Connection c;
  Connection::Output out;
  c.start(out);
  c.on_message(R"({"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"boom"}})", out);
  CHECK(c.phase() == Connection::Phase::failed);
  REQUIRE(out.failure);
  CHECK(out.failure->find("boom") != std::string::npos);

  Connection d;
  Connection::Output o2;
  d.start(o2);
  d.on_message(result(0, R"({"protocolVersion":"1999-01-01","capabilities":{}})"), o2);
  REQUIRE(o2.failure);
  CHECK(o2.failure->find("1999-01-01") != std::string::npos);
}

TEST_CASE("mcp connection: garbage lines are noted and change nothing") {
  Connection c;
  Connection::Output out;
  c.start(out);
  out = {};
  c.on_message("this is not json", out);
  c.on_message(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":42}})", out);
  CHECK(c.phase() == Connection::Phase::failed);  // a wrong type in the answer is a failure, not a crash
  CHECK(out.notes.size() == 1);
}

TEST_CASE("mcp connection: calls wait for the handshake, carry a progress token and get their own answer") {
  Connection c;
  Connection::Output out;
  c.start(out);
  auto n = c.call("echo", RawJson{R"({"message":"hi"})"}, out);
  CHECK(out.messages.size() == 1);  // only initialize so far
  out = {};
  c.on_message(result(0, R"({"protocolVersion":"2025-11-25","capabilities":{}})"), out);  // no tools capability
  CHECK(out.became_ready);
  REQUIRE(out.messages.size() == 2);
  Sent call(out.messages[1]);
  CHECK(call.str("/method") == "tools/call");
  CHECK(call.str("/params/name") == "echo");
  CHECK(call.str("/params/arguments/message") == "hi");
  CHECK(call.num("/params/_meta/progressToken") == static_cast<int64_t>(n));
  auto id = call.num("/id");

  out = {};
  c.on_message(fmt::format(R"({{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":3,"total":10,"message":"indexing"}}}})", n),
               out);
  REQUIRE(out.progress.size() == 1);
  CHECK(out.progress[0].message == "3/10: indexing");

  c.on_message(result(id, R"({"content":[{"type":"text","text":"hi"}]})"), out);
  REQUIRE(out.ended.size() == 1);
  CHECK(out.ended[0].call == n);
  CHECK(out.ended[0].ok);
  CHECK(out.ended[0].result == R"({"content":[{"type":"text","text":"hi"}]})");
  CHECK(c.in_flight() == 0);

  // An error answer ends the call with the server's message.
  auto m = c.call("boom", std::nullopt, out);
  Sent second(out.messages.back());
  out = {};
  c.on_message(fmt::format(R"({{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"no such tool"}}}})",
                           second.num("/id")),
               out);
  REQUIRE(out.ended.size() == 1);
  CHECK(out.ended[0].call == m);
  CHECK(out.ended[0].error == "tool call error: no such tool (code -32602)");
}

TEST_CASE("mcp connection: an abandoned call sends notifications/cancelled and ignores the late answer") {
  auto c = ready_with({R"({"tools":[]})"});
  Connection::Output out;
  auto n = c.call("slow", std::nullopt, out);
  auto id = Sent(out.messages.back()).num("/id");
  out = {};
  c.abandon(n, "timed out awaiting tools/call after 1s", out);
  REQUIRE(out.messages.size() == 1);
  Sent cancelled(out.messages[0]);
  CHECK(cancelled.str("/method") == "notifications/cancelled");
  CHECK(cancelled.num("/params/requestId") == id);
  REQUIRE(out.ended.size() == 1);
  CHECK_FALSE(out.ended[0].ok);
  out = {};
  c.on_message(result(id, R"({"content":[]})"), out);
  CHECK(out.ended.empty());
}

TEST_CASE("mcp connection: ping is answered, elicitations go to the owner, undeclared requests are refused") {
  auto c = ready_with({R"({"tools":[]})"});
  Connection::Output out;
  c.on_message(R"({"jsonrpc":"2.0","id":"p","method":"ping"})", out);
  REQUIRE(out.messages.size() == 1);
  CHECK(Sent(out.messages[0]).str("/id") == "p");

  out = {};
  auto n = c.call("ask", std::nullopt, out);
  out = {};
  c.on_message(
      R"({"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}})",
      out);
  REQUIRE(out.elicitations.size() == 1);
  CHECK(out.elicitations[0].id == "9");
  CHECK(out.elicitations[0].call == n);
  CHECK(out.elicitations[0].message == "Name?");
  c.answer("9", R"({"action":"accept","content":{"name":"x"}})", out);
  Sent answer(out.messages.back());
  CHECK(answer.num("/id") == 9);
  CHECK(answer.str("/result/action") == "accept");

  out = {};
  c.on_message(R"({"jsonrpc":"2.0","id":10,"method":"sampling/createMessage","params":{}})", out);
  REQUIRE(out.messages.size() == 1);
  CHECK(Sent(out.messages[0]).num("/error/code") == -32601);
}

TEST_CASE("mcp connection: list_changed lists again, once, even when it arrives mid-listing") {
  auto c = ready_with({R"({"tools":[{"name":"a"}]})"});
  Connection::Output out;
  c.on_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})", out);
  REQUIRE(out.messages.size() == 1);
  auto id = Sent(out.messages[0]).num("/id");
  c.on_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})", out);
  CHECK(out.messages.size() == 1);  // queued behind the running listing
  out = {};
  c.on_message(result(id, R"({"tools":[{"name":"a"},{"name":"b"}]})"), out);
  CHECK(out.tools_changed);
  CHECK(c.tools().size() == 2);
  REQUIRE(out.messages.size() == 1);  // the queued relist
  CHECK(Sent(out.messages[0]).str("/method") == "tools/list");
}

TEST_CASE("mcp connection: a dying transport ends every call and a running handshake") {
  Connection c;
  Connection::Output out;
  c.start(out);
  c.call("x", std::nullopt, out);
  out = {};
  c.fail("the server exited (status 3)", out);
  REQUIRE(out.failure);
  REQUIRE(out.ended.size() == 1);
  CHECK(out.ended[0].error == "the server exited (status 3)");
  out = {};
  c.call("y", std::nullopt, out);
  REQUIRE(out.ended.size() == 1);
  CHECK_FALSE(out.ended[0].ok);
}

TEST_CASE("mcp connection: odd field types cost the field, never the listing or the call") {
  auto c = ready_with({R"({"tools":[{"name":"a","description":5,"annotations":{"readOnlyHint":"yes"}},{"name":"b"}]})"});
  REQUIRE(c.tools().size() == 2);
  CHECK(c.tools()[0].description.empty());
  CHECK_FALSE(c.tools()[0].read_only);
  json::Parser p;
  auto out = tool_output(p.parse(R"({"isError":"yes","content":[{"type":"text","text":5},{"type":"image","data":1}]})"));
  CHECK(out.success);  // only `true` is an error
  CHECK(out.parts.size() == 2);
}

TEST_CASE("mcp connection: with several calls in flight an elicitation belongs to none of them") {
  auto c = ready_with({R"({"tools":[]})"});
  Connection::Output out;
  c.call("a", std::nullopt, out);
  c.call("b", std::nullopt, out);
  out = {};
  c.on_message(R"({"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"?"}})", out);
  REQUIRE(out.elicitations.size() == 1);
  CHECK_FALSE(out.elicitations[0].call);
  // Batches are read one level deep.
  out = {};
  c.on_message(R"([{"jsonrpc":"2.0","id":"x","method":"ping"},[{"jsonrpc":"2.0","id":"y","method":"ping"}]])", out);
  CHECK(out.messages.size() == 1);
}

TEST_CASE("mcp call end: the Ok and Err of mcp_tool_call_end read back one way for every consumer") {
  auto ok = read_call_end(R"({"Ok":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}})");
  CHECK(ok.ok);
  CHECK_FALSE(ok.failed);
  CHECK(ok.content == R"([{"type":"text","text":"hi"}])");
  CHECK(ok.structured == std::optional<std::string>(R"({"a":1})"));
  auto flagged = read_call_end(R"({"Ok":{"content":[],"isError":true}})");
  CHECK(flagged.ok);
  CHECK(flagged.failed);
  CHECK_FALSE(flagged.structured);
  auto err = read_call_end(R"({"Err":"timed out"})");
  CHECK_FALSE(err.ok);
  CHECK(err.failed);
  CHECK(err.error == "timed out");
}

TEST_CASE("mcp elicit result: accept with the form, cancel on abort, decline otherwise") {
  CHECK(elicit_result(ReviewDecision::approved, RawJson{R"({"name":"Ada"})"}) ==
        R"({"action":"accept","content":{"name":"Ada"}})");
  CHECK(elicit_result(ReviewDecision::approved_for_session) == R"({"action":"accept"})");
  CHECK(elicit_result(ReviewDecision::abort) == R"({"action":"cancel"})");
  CHECK(elicit_result(ReviewDecision::denied) == R"({"action":"decline"})");
}
