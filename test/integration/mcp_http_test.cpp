// `llmx mcp-server --listen http://127.0.0.1:0` on the raw wire (issue 16 point 4): 2025 sessions
// named by Mcp-Session-Id with answers as JSON or SSE and a GET stream, 2026-07-28 requests
// without a session and with their headers checked, a client that goes away cancelling its call,
// and the Host, Origin and token checks.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "test/support/listener_fixture.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view kJson = "application/json";

std::string meta2026(std::string_view caps = "{}") {
  return R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":)" +
         std::string(caps) + "}";
}

struct Http {
  TempDir home{"llmx-http"};
  MockLlm mock;
  Listener server;
  explicit Http(ListenOptions o = {}) : server(home.path(), mock.url(), std::move(o)) {}

  httplib::Result post(const std::string& body, const httplib::Headers& headers) {
    auto c = server.client();
    auto r = c.Post("/mcp", headers, body, std::string(kJson));
    record_exchange(headers, body, r);
    return r;
  }
  // initialize + notifications/initialized; the session id.
  std::string open_session(std::string_view caps = "{}") {
    auto r = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                  R"("capabilities":)" + std::string(caps) + R"(,"clientInfo":{"name":"t","version":"1"}}})",
                  mcp_headers());
    REQUIRE(r);
    REQUIRE(r->status == 200);
    auto sid = r->get_header_value("Mcp-Session-Id");
    REQUIRE(sid.size() >= 16);
    auto init = post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", mcp_headers(sid, "2025-11-25"));
    REQUIRE(init);
    CHECK(init->status == 202);
    return sid;
  }
  // A 2026-07-28 request with the headers that go with it.
  httplib::Result stateless(std::string_view method, std::string_view params_without_meta, std::string_view caps = "{}",
                            std::optional<std::string> name = std::nullopt, int id = 7) {
    auto h = mcp_headers({}, "2026-07-28");
    h.emplace("Mcp-Method", std::string(method));
    if (name) h.emplace("Mcp-Name", *name);
    std::string params = "{" + std::string(params_without_meta) + (params_without_meta.empty() ? "" : ",") +
                         R"("_meta":)" + meta2026(caps) + "}";
    return post(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
                    R"(","params":)" + params + "}",
                h);
  }
};

Message last(const std::vector<Message>& m) {
  REQUIRE_FALSE(m.empty());
  return m.back();
}

}  // namespace

TEST_CASE("mcp http: a 2025 session is named at initialize, streams a call's notifications and ends with DELETE") {
  Http f;
  auto sid = f.open_session();
  auto tools = f.post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", mcp_headers(sid, "2025-11-25"));
  REQUIRE(tools);
  CHECK(tools->status == 200);
  CHECK(tools->get_header_value("Content-Type") == kJson);
  CHECK(array_size(last(messages_of(tools)), "/result/tools") == 2);

  auto call = f.post(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"llmx","arguments":)"
                     R"({"prompt":"@mock:echo over http"},"_meta":{"progressToken":"p"}}})",
                     mcp_headers(sid, "2025-11-25"));
  REQUIRE(call);
  CHECK(call->status == 200);
  CHECK(call->get_header_value("Content-Type") == "text/event-stream");
  auto events = messages_of(call);
  REQUIRE(events.size() > 3);
  size_t progress = 0, llmx_events = 0;
  for (const auto& m : events) {
    progress += m.method() == "notifications/progress";
    if (m.is_event()) {
      ++llmx_events;
      CHECK(m.event_request_id() == "3");
    }
  }
  CHECK(progress >= 1);
  CHECK(llmx_events >= 3);
  const auto& result = last(events);
  CHECK(result.id() == "3");
  CHECK(contains(result_text(result), "over http"));

  auto ping = f.post(R"({"jsonrpc":"2.0","id":4,"method":"ping"})", mcp_headers(sid, "2025-11-25"));
  CHECK(last(messages_of(ping)).text("/result") == "{}");
  // Without the session, with a made-up one, with an unknown version.
  auto none = f.post(R"({"jsonrpc":"2.0","id":5,"method":"ping"})", mcp_headers());
  CHECK(none->status == 400);
  auto made_up = f.post(R"({"jsonrpc":"2.0","id":5,"method":"ping"})", mcp_headers("not-a-session", "2025-11-25"));
  CHECK(made_up->status == 404);
  CHECK(last(messages_of(made_up)).integer("/error/code") == -32001);
  auto old = f.post(R"({"jsonrpc":"2.0","id":5,"method":"ping"})", mcp_headers(sid, "2019-01-01"));
  CHECK(old->status == 400);
  // DELETE ends it.
  auto c = f.server.client();
  auto del = c.Delete("/mcp", mcp_headers(sid, "2025-11-25"));
  REQUIRE(del);
  CHECK(del->status == 200);
  auto after = f.post(R"({"jsonrpc":"2.0","id":6,"method":"ping"})", mcp_headers(sid, "2025-11-25"));
  CHECK(after->status == 404);
}

TEST_CASE("mcp http: the GET stream carries the status of a task nobody waits on, a new GET replaces the old") {
  Http f;
  auto sid = f.open_session();
  // A GET stream read on a thread until it ends or `stop` is set.
  struct Stream {
    std::mutex mu;
    std::string text;
    std::atomic<bool> stop{false}, ended{false};
    std::thread reader;
    bool seen(std::string_view what) {
      for (int i = 0; i < 400; ++i) {
        {
          std::lock_guard lock(mu);
          if (contains(text, what)) return true;
        }
        std::this_thread::sleep_for(25ms);
      }
      return false;
    }
  };
  auto open = [&](Stream& s) {
    s.reader = std::thread([&f, &s, sid] {
      auto c = f.server.client();
      c.Get("/mcp", mcp_headers(sid, "2025-11-25"), [&](const char* data, size_t n) {
        std::lock_guard lock(s.mu);
        s.text.append(data, n);
        return !s.stop.load();
      });
      s.ended = true;
    });
  };
  Stream first, second;
  open(first);
  std::this_thread::sleep_for(300ms);  // the first GET is open (nothing to read on it yet)
  open(second);  // a client that reconnects: the old stream ends, the new one takes over
  // Under load the second GET can reach the server first; then it is the one replaced. Either
  // way exactly one stream ends and the other carries what follows.
  for (int i = 0; i < 400 && !first.ended && !second.ended; ++i) std::this_thread::sleep_for(25ms);
  std::this_thread::sleep_for(100ms);
  CHECK(first.ended.load() != second.ended.load());
  Stream& old = first.ended ? first : second;
  Stream& live = first.ended ? second : first;
  old.stop = true;  // never wait on a stream the server kept open by mistake
  old.reader.join();

  // A task that ends while no request waits on it: its status goes out on the GET stream. (While
  // a tasks/result for it is open, its messages go on that request's stream instead, so the
  // status is awaited here before tasks/result is asked.)
  auto created = f.post(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"llmx","arguments":)"
                        R"({"prompt":"@mock:echo task over http"},"task":{"ttl":60000}}})",
                        mcp_headers(sid, "2025-11-25"));
  REQUIRE(created);
  auto task_id = last(messages_of(created)).str("/result/task/taskId");
  REQUIRE_FALSE(task_id.empty());
  // The GET stream is read on its own thread; seen() waits up to 10 s (a loop around it made a
  // miss a 150-s hang instead of a failure).
  CHECK(live.seen("notifications/tasks/status"));
  CHECK(live.seen(task_id));
  CHECK(live.seen(R"("status":"completed")"));
  auto result = f.post(R"({"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":")" + task_id + R"("}})",
                       mcp_headers(sid, "2025-11-25"));
  REQUIRE(result);
  auto done = last(messages_of(result));
  CHECK(done.id() == "3");
  CHECK(contains(result_text(done), "task over http"));
  // Ending the session ends its GET stream too.
  auto c = f.server.client();
  CHECK(c.Delete("/mcp", mcp_headers(sid, "2025-11-25"))->status == 200);
  for (int i = 0; i < 400 && !live.ended; ++i) std::this_thread::sleep_for(25ms);
  live.stop = true;
  CHECK(live.ended.load());
  live.reader.join();
}

TEST_CASE("mcp http: a client that goes away cancels its call") {
  SUBCASE("a 2025 session's call") {
    Http f;
    auto sid = f.open_session();
    auto c = f.server.client();
    httplib::Request req;
    req.method = "POST";
    req.path = "/mcp";
    req.headers = mcp_headers(sid, "2025-11-25");
    req.set_header("Content-Type", "application/json");
    req.body = R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"llmx","arguments":)"
               R"({"prompt":"@mock:hang"},"_meta":{"progressToken":1}}})";
    std::string got;
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      got.append(data, n);
      return !contains(got, "notifications/progress");  // the turn runs: hang up
    };
    c.send(req);
    CHECK(contains(got, "notifications/progress"));
    CHECK(some_turn_aborted(f.home.path(), 10s));
    // The session goes on.
    auto ping = f.post(R"({"jsonrpc":"2.0","id":3,"method":"ping"})", mcp_headers(sid, "2025-11-25"));
    CHECK(ping->status == 200);
  }
  SUBCASE("a 2026 request") {
    Http f;
    std::thread hang([&] {
      auto c = f.server.client(std::chrono::seconds(1));  // gives up after a second: the connection closes
      auto h = mcp_headers({}, "2026-07-28");
      h.emplace("Mcp-Method", "tools/call");
      h.emplace("Mcp-Name", "llmx");
      c.Post("/mcp", h,
             R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"llmx","arguments":{"prompt":"@mock:hang"},)"
             R"("_meta":)" + meta2026() + "}}",
             std::string(kJson));
    });
    hang.join();
    CHECK(some_turn_aborted(f.home.path(), 10s));
  }
}

TEST_CASE("mcp http: 2026 requests need no session and their headers must match the body") {
  Http f;
  auto discover = f.stateless("server/discover", "");
  REQUIRE(discover);
  CHECK(discover->status == 200);
  CHECK(discover->get_header_value("Mcp-Session-Id").empty());
  CHECK(last(messages_of(discover)).has("/result/capabilities/extensions/io.modelcontextprotocol~1tasks"));
  // Headers against the body.
  auto h = mcp_headers({}, "2026-07-28");
  h.emplace("Mcp-Method", "tools/list");
  auto wrong_method = f.post(R"({"jsonrpc":"2.0","id":8,"method":"server/discover","params":{"_meta":)" + meta2026() + "}}", h);
  CHECK(wrong_method->status == 400);
  CHECK(last(messages_of(wrong_method)).integer("/error/code") == -32020);
  CHECK(last(messages_of(wrong_method)).id() == "8");
  auto wrong_name = f.stateless("tools/call", R"("name":"llmx","arguments":{"prompt":"x"})", "{}", "llmx-reply");
  CHECK(wrong_name->status == 400);
  CHECK(last(messages_of(wrong_name)).integer("/error/code") == -32020);
  auto no_name = f.stateless("tools/call", R"("name":"llmx","arguments":{"prompt":"x"})");
  CHECK(no_name->status == 400);
  auto encoded = f.stateless("tools/call", R"("name":"llmx","arguments":{"prompt":"@mock:echo b64"})", "{}",
                             "=?base64?bGxteA==?=");
  CHECK(encoded->status == 200);
  CHECK(contains(result_text(last(messages_of(encoded))), "b64"));
  // Statuses of the revision's errors.
  auto unknown = f.stateless("initialize", "");
  CHECK(unknown->status == 404);
  CHECK(last(messages_of(unknown)).integer("/error/code") == -32601);
  auto h2 = mcp_headers({}, "2099-01-01");
  h2.emplace("Mcp-Method", "server/discover");
  auto future = f.post(R"({"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":)"
                       R"({"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}})",
                       h2);
  CHECK(future->status == 400);
  CHECK(last(messages_of(future)).integer("/error/code") == -32022);
  auto c = f.server.client();
  CHECK(c.Get("/mcp", mcp_headers({}, "2026-07-28"))->status == 405);
  // A task with the extension, polled on other requests.
  constexpr std::string_view kTasks = R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})";
  auto created = f.stateless("tools/call", R"("name":"llmx","arguments":{"prompt":"@mock:echo polled"})", kTasks, "llmx");
  REQUIRE(created->status == 200);
  auto task_id = last(messages_of(created)).str("/result/taskId");
  std::string status;
  for (int i = 0; i < 200 && status != "completed"; ++i) {
    auto got = f.stateless("tasks/get", R"("taskId":")" + task_id + "\"", kTasks, task_id);
    status = last(messages_of(got)).str("/result/status");
    if (status != "completed") std::this_thread::sleep_for(25ms);
  }
  CHECK(status == "completed");
}

TEST_CASE("mcp http: Host, Origin and the bearer token are checked") {
  SUBCASE("loopback without a token") {
    Http f;
    auto c = f.server.client();
    auto evil_host = mcp_headers();
    evil_host.emplace("Host", "evil.example.com");
    CHECK(c.Post("/mcp", evil_host, "{}", std::string(kJson))->status == 403);
    auto evil_origin = mcp_headers();
    evil_origin.emplace("Origin", "http://evil.example.com");
    CHECK(c.Post("/mcp", evil_origin, "{}", std::string(kJson))->status == 403);
    auto local_origin = mcp_headers();
    local_origin.emplace("Origin", "http://localhost:3000");
    CHECK(c.Post("/mcp", local_origin, R"({"jsonrpc":"2.0","id":1,"method":"ping"})", std::string(kJson))->status == 400);
    CHECK(c.Get("/healthz")->body == "ok\n");
    CHECK(c.Get("/readyz")->status == 200);
  }
  SUBCASE("a token, when set, is required") {
    Http f(ListenOptions{.env = {{"LLMX_LISTEN_TOKEN", "s3cret-token"}}});
    auto c = f.server.client();
    auto no = c.Post("/mcp", mcp_headers(), R"({"jsonrpc":"2.0","id":1,"method":"ping"})", std::string(kJson));
    CHECK(no->status == 401);
    CHECK(contains(no->get_header_value("WWW-Authenticate"), "Bearer"));
    auto wrong = mcp_headers();
    wrong.emplace("Authorization", "Bearer s3cret-tokeN");
    CHECK(c.Post("/mcp", wrong, "{}", std::string(kJson))->status == 401);
    auto right = mcp_headers();
    right.emplace("Authorization", "Bearer s3cret-token");
    auto init = c.Post("/mcp", right,
                       R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                       R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
                       std::string(kJson));
    CHECK(init->status == 200);
    CHECK(c.Get("/healthz")->status == 200);  // health checks need no token
  }
  SUBCASE("off loopback without a token it does not start") {
    TempDir home{"llmx-http-refused"};
    SpawnOptions o;
    o.argv = {LLMX_BIN, "mcp-server", "--listen", "http://0.0.0.0:0"};
    o.unset_env = llmx_vars();
    o.env = llmx_env(home.path(), "http://127.0.0.1:9/v1");
    ChildProcess p(std::move(o));
    auto st = p.wait(10s);
    CHECK(st.exited);
    CHECK(st.code == 2);
    CHECK(contains(p.read_all_stderr(2s), "LLMX_LISTEN_TOKEN"));
  }
}
