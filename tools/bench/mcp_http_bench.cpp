#include "mcp_http_bench.hpp"

#include <signal.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "process.hpp"
#include "tools/mock-llm/http.hpp"  // cpp-httplib with the macros its Debian build has

namespace llmx::bench {

namespace {

using namespace std::chrono;


const httplib::Headers kAccept{{"Accept", "application/json, text/event-stream"}};

}  // namespace

void mcp_http_rows(const McpHttpBenchEnv& env, const std::function<void(std::string)>& row) {
  Child server({env.llmx, "mcp-server", "--listen", "http://127.0.0.1:0"},
               {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
  auto line = server.read_line(seconds(10));
  if (!line || !line->starts_with("listening http://127.0.0.1:")) {
    row("| MCP over HTTP | the listener did not start |");
    return;
  }
  int port = std::stoi(line->substr(line->rfind(':') + 1));
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);  // as real clients (undici) do
  c.set_read_timeout(seconds(20));
  const std::string init = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                           R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})";
  auto open = [&] {
    auto r = c.Post("/mcp", kAccept, init, "application/json");
    return r ? r->get_header_value("Mcp-Session-Id") : std::string();
  };
  auto sid = open();
  auto headers = kAccept;
  headers.emplace("Mcp-Session-Id", sid);
  headers.emplace("MCP-Protocol-Version", "2025-11-25");
  c.Post("/mcp", headers, R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "application/json");
  auto stateless = kAccept;
  stateless.emplace("MCP-Protocol-Version", "2026-07-28");
  stateless.emplace("Mcp-Method", "tools/call");
  stateless.emplace("Mcp-Name", "llmx");
  const std::string call = R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"llmx","arguments":)"
                           R"({"prompt":"@mock:echo hi"},"_meta":{"progressToken":1}}})";
  const std::string call2026 = R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"llmx","arguments":)"
                               R"({"prompt":"@mock:echo hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                               R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
  std::vector<double> ping, session, sse, plain2026;
  size_t failures = 0;
  for (int i = 0; i < 60; ++i) {
    auto t0 = steady_clock::now();
    auto p = c.Post("/mcp", headers, R"({"jsonrpc":"2.0","id":9,"method":"ping"})", "application/json");
    auto t1 = steady_clock::now();
    auto s = open();
    auto t2 = steady_clock::now();
    auto r = c.Post("/mcp", headers, call, "application/json");
    auto t3 = steady_clock::now();
    auto r2 = c.Post("/mcp", stateless, call2026, "application/json");
    auto t4 = steady_clock::now();
    bool ok = p && p->status == 200 && !s.empty() && r && r->body.find(R"("id":2,"result")") != std::string::npos &&
              r2 && r2->body.find(R"("resultType":"complete")") != std::string::npos;
    if (!ok) ++failures;
    if (i < 10 || !ok) continue;  // warm-up
    ping.push_back(ms_between(t0, t1));
    session.push_back(ms_between(t1, t2));
    sse.push_back(ms_between(t2, t3));
    plain2026.push_back(ms_between(t3, t4));
  }
  row(fmt::format("| MCP over HTTP: ping in a 2025 session (kept-alive connection) | {} |", p90_text(ping)));
  row(fmt::format("| MCP over HTTP: initialize → a new session | {} |", p90_text(session)));
  row(fmt::format("| MCP over HTTP: tools/call streamed as SSE (one-answer turn) | {} |", p90_text(sse)));
  row(fmt::format("| MCP over HTTP: 2026-07-28 tools/call without a session (one-answer turn) | {} |",
                  p90_text(plain2026)));
  if (failures) row(fmt::format("| MCP over HTTP: failed rounds | {} of 60 |", failures));
  ::kill(server.pid(), SIGTERM);
  server.wait(seconds(10));
}

}  // namespace llmx::bench
