// Bad input to `llmx mcp-server --listen` over HTTP (issue 16): wrong content types and headers,
// malformed and hostile JSON-RPC, huge bodies and headers, garbage HTTP, slow-loris clients and a
// thousand connections at once. Each gets an HTTP error (or is cut), and the server goes on.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <memory>
#include <thread>
#include <vector>

#include "test/support/listener_fixture.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

struct Server {
  TempDir home{"llmx-http-bad"};
  Listener server{home.path(), "http://127.0.0.1:9/v1"};  // no model is reached here

  httplib::Result post(const std::string& body, httplib::Headers headers = mcp_headers(),
                       const std::string& type = "application/json") {
    auto c = server.client();
    return c.Post("/mcp", headers, body, type);
  }
  // The server still answers: a new session's initialize.
  bool alive() {
    auto r = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                  R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    return r && r->status == 200 && !r->get_header_value("Mcp-Session-Id").empty() && server.process().running();
  }
  // What a raw request gets back before the server closes (or 5 s pass).
  std::string raw(std::string_view bytes) {
    RawSocket s(server.port());
    REQUIRE(s.ok());
    s.send(bytes);
    return s.read_until_close(5s);
  }
};

int status_of(const httplib::Result& r) { return r ? r->status : -1; }

int code_of(const httplib::Result& r) { return static_cast<int>(last_message(r).integer("/error/code")); }

}  // namespace

TEST_CASE("http bad input: wrong content type, Accept, method, path and JSON get HTTP errors") {
  Server f;
  CHECK(status_of(f.post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", mcp_headers(), "text/plain")) == 415);
  CHECK(status_of(f.post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Accept", "application/json"}})) == 406);
  auto garbage = f.post("{not json");
  CHECK(status_of(garbage) == 400);
  CHECK(code_of(garbage) == -32700);
  for (const char* hostile : {R"({"jsonrpc":"2.0","id":1,"method":5})", R"({"jsonrpc":"2.0","id":true,"method":"ping"})",
                              R"({"jsonrpc":"2.0","id":{},"method":"ping"})", R"("just a string")", "[]",
                              R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", R"({"jsonrpc":"2.0"})"}) {
    CAPTURE(hostile);
    auto r = f.post(hostile);
    CHECK(status_of(r) == 400);
    CHECK(code_of(r) == -32600);
  }
  auto c = f.server.client();
  CHECK(status_of(c.Put("/mcp", "{}", "application/json")) == 405);
  CHECK(status_of(c.Post("/elsewhere", mcp_headers(), "{}", "application/json")) == 404);
  CHECK(f.alive());
}

TEST_CASE("http bad input: huge bodies and headers, garbage HTTP, HTTP/1.0 and Expect: 100-continue") {
  Server f;
  std::string huge = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":")" + std::string(20 * 1024 * 1024, 'a') + "\"}}";
  auto big = f.post(huge);
  CHECK((!big || big->status == 413));  // answered 413, or cut while still sending
  auto headers = mcp_headers();
  headers.emplace("X-Big", std::string(100 * 1024, 'h'));
  CHECK(status_of(f.post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", headers)) == 431);
  CHECK(contains(f.raw("HELLO THERE\r\n\r\n"), " 400 "));
  CHECK(contains(f.raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: nope\r\n\r\n"), " 400 "));
  // HTTP/1.0 gets no chunks (its body ends with the connection).
  std::string init = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                     R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  auto old = f.raw("POST /mcp HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\nContent-Length: " +
                   std::to_string(init.size()) + "\r\n\r\n" + init);
  CHECK(contains(old, "HTTP/1.0 200"));
  CHECK_FALSE(contains(old, "chunked"));
  // A client that waits for 100 Continue before its body.
  RawSocket s(f.server.port());
  s.send("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, "
         "text/event-stream\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: " +
         std::to_string(init.size()) + "\r\n\r\n");
  auto first = s.read_until_close(500ms);
  CHECK(contains(first, "100 Continue"));
  s.send(init);
  CHECK(contains(s.read_until_close(5s), "Mcp-Session-Id"));
  CHECK(f.alive());
}

TEST_CASE("http bad input: slow-loris clients are cut and do not hold up others") {
  Server f;
  std::vector<std::unique_ptr<RawSocket>> slow;
  for (int i = 0; i < 50; ++i) {
    slow.push_back(std::make_unique<RawSocket>(f.server.port()));
    REQUIRE(slow.back()->ok());
    slow.back()->send("POST /mcp HTTP/1.1\r\nHost: loc");  // and then a byte now and then
  }
  // Meanwhile everyone else is served.
  for (int i = 0; i < 10; ++i) CHECK(f.alive());
  for (int round = 0; round < 5; ++round) {
    for (auto& s : slow) s->send("a");
    std::this_thread::sleep_for(200ms);
  }
  for (int i = 0; i < 5; ++i) CHECK(f.alive());
  // The request timeout (10 s for a whole request) cuts them.
  size_t cut = 0;
  for (auto& s : slow) cut += s->closed_within(15s);
  CHECK(cut == slow.size());
  CHECK(f.alive());
}

TEST_CASE("http bad input: a thousand connections at once") {
  rlimit lim{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &lim) == 0);
  if (lim.rlim_cur < 1200 && lim.rlim_max >= 1200) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 4096);
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  REQUIRE(getrlimit(RLIMIT_NOFILE, &lim) == 0);
  if (lim.rlim_cur < 1200) {
    MESSAGE("skipped: this process may open only " << lim.rlim_cur << " files");
    return;
  }
  Server f;
  std::vector<std::unique_ptr<RawSocket>> conns;
  for (int i = 0; i < 1000; ++i) {
    conns.push_back(std::make_unique<RawSocket>(f.server.port()));
    REQUIRE(conns.back()->ok());
  }
  for (auto& c : conns) c->send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  size_t ok = 0;
  for (auto& c : conns) ok += contains(c->read_until_close(10s), "200 OK");
  CHECK(ok == conns.size());
  conns.clear();
  CHECK(f.alive());
}
