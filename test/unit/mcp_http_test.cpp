// MCP over Streamable HTTP, the plain parts (protocol/rpc/mcp_http.*): reading a POSTed message,
// routing a session's line to its request, the 2026 header checks and the statuses.
#include <doctest/doctest.h>

#include "protocol/rpc/mcp_http.hpp"
#include "transport/http_listener.hpp"

using namespace llmx::mcp::http;

TEST_CASE("mcp http: a POSTed message is read once, and what is not one is refused") {
  llmx::json::Parser parser;
  auto call = read_posted(parser, R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"llmx",)"
                          R"("_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  CHECK(call.kind == Posted::Kind::request);
  CHECK(call.id == R"("a")");
  CHECK(call.id_plain == "a");
  CHECK(call.name == "llmx");
  CHECK(call.progress_token == "7");
  CHECK(call.meta_version == "2026-07-28");
  auto task = read_posted(parser, R"({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-1"}})");
  CHECK(task.task_id == "t-1");
  CHECK(task.name == "t-1");  // what Mcp-Name carries for a task
  CHECK(read_posted(parser, R"({"jsonrpc":"2.0","method":"notifications/initialized"})").kind == Posted::Kind::notification);
  CHECK(read_posted(parser, R"({"jsonrpc":"2.0","id":4,"result":{}})").kind == Posted::Kind::response);
  CHECK(read_posted(parser, R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])").kind == Posted::Kind::batch);
  for (const char* bad : {"{", "42", R"({"jsonrpc":"2.0","id":1,"method":5})", R"({"jsonrpc":"2.0","id":true,"method":"x"})",
                          R"({"jsonrpc":"2.0","id":1.5,"method":"x"})", R"({"jsonrpc":"2.0","id":1})"}) {
    CAPTURE(bad);
    auto p = read_posted(parser, bad);
    CHECK(p.kind == Posted::Kind::invalid);
    CHECK_FALSE(p.error.empty());
  }
  CHECK(read_posted(parser, "{").error.starts_with("Parse error"));
}

TEST_CASE("mcp http: a session's line finds its request by id, progress token, tool-call tag or task") {
  llmx::json::Parser parser;
  auto answer = route_of(parser, R"({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}})");
  CHECK(answer.kind == Route::Kind::response);
  CHECK(answer.request_id == R"("a")");
  CHECK(answer.error_code == -32601);
  auto event = route_of(parser, R"({"jsonrpc":"2.0","method":"llmx/event","params":{"_meta":{"requestId":3},"msg":{}}})");
  CHECK(event.kind == Route::Kind::related);
  CHECK(event.request_id == "3");
  CHECK(route_of(parser, R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}})")
            .progress_token == R"("p")");
  auto ask_2025 = route_of(parser, R"({"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"_meta":{"llmx_mcp_tool_call_id":"3"}}})");
  CHECK(ask_2025.kind == Route::Kind::related);
  CHECK(ask_2025.request_plain == "3");
  auto ask_old = route_of(parser, R"({"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"llmx_mcp_tool_call_id":"3"}})");
  CHECK(ask_old.request_plain == "3");
  auto status = route_of(parser, R"({"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t"}})");
  CHECK(status.task_id == "t");
  auto tagged = route_of(parser, R"({"jsonrpc":"2.0","method":"llmx/event","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"u"}}}})");
  CHECK(tagged.task_id == "u");
  CHECK(route_of(parser, R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})").kind == Route::Kind::unrelated);
  CHECK(route_of(parser, "not json").kind == Route::Kind::unrelated);
  CHECK(route_of(parser, R"({"method":7,"params":{"progressToken":1}})").kind == Route::Kind::unrelated);
}

TEST_CASE("mcp http: 2026 headers must match the body") {
  llmx::json::Parser parser;
  auto call = read_posted(parser, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"llmx",)"
                          R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  CHECK_FALSE(header_mismatch(call, "2026-07-28", "tools/call", "llmx"));
  CHECK_FALSE(header_mismatch(call, "2026-07-28", " tools/call ", "  llmx  "));  // surrounding whitespace is not the value
  CHECK_FALSE(header_mismatch(call, "2026-07-28", "tools/call", "=?base64?bGxteA==?="));
  CHECK(header_mismatch(call, std::nullopt, "tools/call", "llmx"));
  CHECK(header_mismatch(call, "2099-01-01", "tools/call", "llmx"));
  CHECK(header_mismatch(call, "2026-07-28", std::nullopt, "llmx"));
  CHECK(header_mismatch(call, "2026-07-28", "TOOLS/CALL", "llmx"));  // values are case-sensitive
  CHECK(header_mismatch(call, "2026-07-28", "tools/call", std::nullopt));
  CHECK(header_mismatch(call, "2026-07-28", "tools/call", "llmx-reply"));
  CHECK(header_mismatch(call, "2026-07-28", "tools/call", "=?base64?!!?="));
  auto task = read_posted(parser, R"({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t"}})");
  CHECK_FALSE(header_mismatch(task, "2026-07-28", "tasks/get", std::nullopt));  // a task's name is checked when sent
  CHECK(header_mismatch(task, "2026-07-28", "tasks/get", "other"));
  auto removed = read_posted(parser, R"({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"t"}})");
  CHECK_FALSE(header_mismatch(removed, "2026-07-28", "tasks/result", std::nullopt));  // -32601 comes first
  CHECK(decode_header_value("plain value") == "plain value");
  CHECK_FALSE(decode_header_value("line\nbreak"));
  CHECK(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=") == "Hello, \xe4\xb8\x96\xe7\x95\x8c");
}

TEST_CASE("mcp http: versions, Accept and statuses") {
  CHECK(is_stateless_version("2026-07-28"));
  CHECK(is_stateless_version("v999.0.0"));  // unknown: refused the 2026 way, with the supported list
  CHECK_FALSE(is_stateless_version("2025-11-25"));
  CHECK_FALSE(is_stateless_version("2025-03-26"));
  CHECK(accepts("application/json, text/event-stream", "text/event-stream"));
  CHECK(accepts("text/event-stream;q=0.9 ,application/json", "application/json"));
  CHECK(accepts("*/*", "text/event-stream"));
  CHECK(accepts("text/*", "text/event-stream"));
  CHECK_FALSE(accepts("application/json", "text/event-stream"));
  CHECK_FALSE(accepts(std::nullopt, "application/json"));
  Route r;
  r.error_code = -32601;
  CHECK(status_of(r, true) == 404);
  CHECK(status_of(r, false) == 200);
  for (int code : {-32020, -32021, -32022, -32602, -32600}) {
    r.error_code = code;
    CHECK(status_of(r, true) == 400);
  }
  r.error_code = -32603;
  CHECK(status_of(r, true) == 200);
  CHECK(sse_event(R"({"a":1})") == "event: message\ndata: {\"a\":1}\n\n");
  CHECK(error_body(-32000, "no", "7") == R"({"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"no"}})");
  CHECK(cancelled_notification(R"("x")", "gone") ==
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"gone"}})");
}

TEST_CASE("http listener: which hosts and origins are this machine's") {
  using llmx::transport::is_local_host;
  using llmx::transport::origin_allowed;
  for (const char* local : {"localhost", "LOCALHOST:8080", "localhost.", "127.0.0.1", "127.0.0.2:9", "[::1]:443"})
    CHECK(is_local_host(local));
  for (const char* other : {"evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "[::2]"})
    CHECK_FALSE(is_local_host(other));
  CHECK(origin_allowed("", "evil.example"));  // not a browser
  CHECK(origin_allowed("http://localhost:3000", "127.0.0.1:9"));
  CHECK(origin_allowed("https://srv.example:8443", "srv.example:8443"));  // the server's own page
  CHECK_FALSE(origin_allowed("http://evil.example", "127.0.0.1:9"));
  CHECK_FALSE(origin_allowed("http://127.0.0.1.evil.example", "127.0.0.1:9"));
  CHECK_FALSE(origin_allowed("null", "127.0.0.1:9"));
  CHECK(is_json_content("application/json"));
  CHECK(is_json_content("Application/JSON; charset=utf-8"));
  CHECK_FALSE(is_json_content("text/plain"));
  CHECK_FALSE(is_json_content(std::nullopt));
}
