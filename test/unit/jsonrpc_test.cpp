// Unit tests for the JSON-RPC envelope (DECISIONS P2): classification of incoming lines, ids
// echoed exactly as the client sent them, and the encoder with and without "jsonrpc".
#include "protocol/rpc/jsonrpc.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace llmx;
using IncomingKind = rpc::Incoming::Kind;

namespace {

// The parser must outlive the elements an Incoming keeps (params/result), so each call owns one.
struct Classified {
  json::Parser parser;
  rpc::Incoming in;
  explicit Classified(std::string_view text) { in = rpc::classify(parser.parse(text)); }
};

std::string text_of(const std::optional<json::Element>& e) { return e ? json::to_text(*e) : "<none>"; }

}  // namespace

TEST_CASE("jsonrpc: a request has a method and an id") {
  Classified c(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  CHECK(c.in.kind == IncomingKind::request);
  CHECK(c.in.id.json == "1");
  CHECK(c.in.method == "initialize");
  CHECK(text_of(c.in.params) == R"({"protocolVersion":"2025-06-18"})");
}

TEST_CASE("jsonrpc: absent or null params are nullopt, other params are kept") {
  CHECK_FALSE(Classified(R"({"id":1,"method":"m"})").in.params.has_value());
  CHECK_FALSE(Classified(R"({"id":1,"method":"m","params":null})").in.params.has_value());
  CHECK(text_of(Classified(R"({"id":1,"method":"m","params":[1,2]})").in.params) == "[1,2]");
}

TEST_CASE("jsonrpc: a notification has a method and no id") {
  Classified c(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(c.in.kind == IncomingKind::notification);
  CHECK(c.in.method == "notifications/initialized");
  CHECK(c.in.id.is_null());
  Classified with_params(R"({"method":"notifications/cancelled","params":{"requestId":3}})");
  CHECK(with_params.in.kind == IncomingKind::notification);
  CHECK(text_of(with_params.in.params) == R"({"requestId":3})");
}

TEST_CASE("jsonrpc: responses and error responses") {
  Classified ok(R"({"jsonrpc":"2.0","id":"srv-1","result":{"decision":"approved"}})");
  CHECK(ok.in.kind == IncomingKind::response);
  CHECK(ok.in.id.json == R"("srv-1")");
  CHECK(text_of(ok.in.result) == R"({"decision":"approved"})");

  Classified null_result(R"({"id":4,"result":null})");
  CHECK(null_result.in.kind == IncomingKind::response);
  CHECK(text_of(null_result.in.result) == "null");

  Classified err(R"({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}})");
  CHECK(err.in.kind == IncomingKind::error_response);
  CHECK(err.in.id.json == "7");
  CHECK(err.in.error_code == -32601);
  CHECK(err.in.error_message == "Method not found");

  Classified odd_err(R"({"id":8,"error":{"code":"x","message":5}})");
  CHECK(odd_err.in.kind == IncomingKind::error_response);  // still an error reply
  CHECK(odd_err.in.id.json == "8");
}

TEST_CASE("jsonrpc: invalid messages") {
  struct Case {
    const char* text;
    const char* id;  // the id to reply with
  };
  const Case cases[] = {
      {"[1,2]", "null"},
      {"\"hello\"", "null"},
      {"42", "null"},
      {"null", "null"},
      {"{}", "null"},
      {R"({"jsonrpc":"2.0"})", "null"},
      {R"({"id":1.5,"method":"x"})", "null"},
      {R"({"id":null,"method":"x"})", "null"},
      {R"({"id":true,"method":"x"})", "null"},
      {R"({"id":{"a":1},"method":"x"})", "null"},
      {R"({"id":[1],"method":"x"})", "null"},
      {R"({"id":1,"method":5})", "1"},
      {R"({"id":"s","method":null})", "\"s\""},
      {R"({"id":2,"method":["x"]})", "2"},
      {R"({"id":3})", "3"},                      // neither method nor result/error
      {R"({"id":3,"error":"oops"})", "3"},       // error must be an object
      {R"({"result":{}})", "null"},              // a response needs an id
      {R"({"id":1.5,"result":{}})", "null"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    Classified r(c.text);
    CHECK(r.in.kind == IncomingKind::invalid);
    CHECK(r.in.invalid_code == rpc::kInvalidRequest);
    CHECK(r.in.id.json == c.id);
    CHECK_FALSE(r.in.invalid_reason.empty());
  }
}

TEST_CASE("jsonrpc: invalid reasons say what is wrong") {
  CHECK(Classified("[1]").in.invalid_reason.find("array") != std::string::npos);
  CHECK(Classified(R"({"id":1,"method":5})").in.invalid_reason.find("method") != std::string::npos);
  CHECK(Classified(R"({"id":true,"method":"x"})").in.invalid_reason.find("id") != std::string::npos);
}

TEST_CASE("jsonrpc: ids are echoed verbatim") {
  const char* ids[] = {"0",
                       "7",
                       "-1",
                       "-9223372036854775808",
                       "9223372036854775807",
                       "9223372036854775808",
                       "18446744073709551615",
                       R"("abc")",
                       R"("")",
                       R"("with \"quotes\" and \\ slash")",
                       R"("héllo")"};
  rpc::Encoder mcp{true}, app{false};
  for (const char* id : ids) {
    CAPTURE(id);
    Classified req(std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":"tools/list"})");
    REQUIRE(req.in.kind == IncomingKind::request);
    CHECK(req.in.id.json == id);
    CHECK(mcp.result(req.in.id, "{}") == std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"result":{}})");
    CHECK(app.error(req.in.id, rpc::kMethodNotFound, "nope") ==
          std::string(R"({"id":)") + id + R"(,"error":{"code":-32601,"message":"nope"}})");
    Classified resp(std::string(R"({"id":)") + id + R"(,"result":true})");
    REQUIRE(resp.in.kind == IncomingKind::response);
    CHECK(resp.in.id == req.in.id);
  }
}

TEST_CASE("jsonrpc: 1 and \"1\" are different ids") {
  Classified a(R"({"id":1,"method":"m"})");
  Classified b(R"({"id":"1","method":"m"})");
  CHECK_FALSE(a.in.id == b.in.id);
  CHECK(a.in.id.as_plain_string() == b.in.id.as_plain_string());
}

TEST_CASE("jsonrpc: encoder with \"jsonrpc\" (MCP)") {
  rpc::Encoder e{true};
  CHECK(e.result(rpc::Id::from_int(1), R"({"tools":[]})") == R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})");
  CHECK(e.error(rpc::Id{}, rpc::kParseError, "Parse error") ==
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  CHECK(e.error(rpc::Id{R"("x")"}, rpc::kInvalidParams, "missing field `prompt`") ==
        R"({"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"missing field `prompt`"}})");
  CHECK(e.notification("notifications/progress", std::string_view(R"({"progress":1})")) ==
        R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})");
  CHECK(e.notification("notifications/initialized", std::nullopt) ==
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(e.request(rpc::Id::from_int(0), "elicitation/create", R"({"message":"ok?"})") ==
        R"({"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"ok?"}})");
}

TEST_CASE("jsonrpc: encoder without \"jsonrpc\" (app server)") {
  rpc::Encoder e{false};
  CHECK(e.result(rpc::Id::from_int(-3), "null") == R"({"id":-3,"result":null})");
  CHECK(e.error(rpc::Id::from_int(2), rpc::kInternalError, "boom \"x\"\n") ==
        R"({"id":2,"error":{"code":-32603,"message":"boom \"x\"\n"}})");
  CHECK(e.notification("turn/started", std::string_view(R"({"turn":{}})")) ==
        R"({"method":"turn/started","params":{"turn":{}}})");
  CHECK(e.notification("x", std::nullopt) == R"({"method":"x"})");
  CHECK(e.request(rpc::Id{R"("r1")"}, "applyPatchApproval", "{}") ==
        R"({"id":"r1","method":"applyPatchApproval","params":{}})");
}

TEST_CASE("jsonrpc: encoded lines classify back to what was sent") {
  rpc::Encoder e{true};
  Classified req(e.request(rpc::Id{R"("q")"}, "m", R"({"a":1})"));
  CHECK(req.in.kind == IncomingKind::request);
  CHECK(req.in.id.json == R"("q")");
  CHECK(text_of(req.in.params) == R"({"a":1})");
  Classified err(e.error(rpc::Id::from_int(5), rpc::kInvalidRequest, "bad"));
  CHECK(err.in.kind == IncomingKind::error_response);
  CHECK(err.in.error_code == -32600);
  CHECK(err.in.error_message == "bad");
}

TEST_CASE("jsonrpc: Id::as_plain_string") {
  CHECK(rpc::Id::from_int(7).as_plain_string() == "7");
  CHECK(rpc::Id::from_int(-12).as_plain_string() == "-12");
  CHECK(rpc::Id{"18446744073709551615"}.as_plain_string() == "18446744073709551615");
  CHECK(rpc::Id{R"("abc")"}.as_plain_string() == "abc");
  CHECK(rpc::Id{R"("")"}.as_plain_string() == "");
  CHECK(rpc::Id{R"("a\"b\\c")"}.as_plain_string() == "a\"b\\c");
  CHECK(rpc::Id{R"("\u00e9")"}.as_plain_string() == "\xC3\xA9");
  CHECK(rpc::Id{}.as_plain_string() == "null");
  CHECK(rpc::Id{}.is_null());
  CHECK_FALSE(rpc::Id::from_int(0).is_null());
}

TEST_CASE("jsonrpc: error codes of DECISIONS P2") {
  CHECK(rpc::kParseError == -32700);
  CHECK(rpc::kInvalidRequest == -32600);
  CHECK(rpc::kMethodNotFound == -32601);
  CHECK(rpc::kInvalidParams == -32602);
  CHECK(rpc::kInternalError == -32603);
}
