#include "mcp_tasks_bench.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "mcp_server_driver.hpp"
#include "protocol/base/json_reader.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// The task id of a CreateTaskResult line ("" when it is not one).
std::string task_id(json::Parser& parser, const std::string& reply) {
  try {
    auto v = parser.parse(reply).at_pointer("/result/task/taskId");
    if (v.is_string()) return std::string(v.get_string().value_unsafe());
  } catch (const std::exception&) {
  }
  return "";
}


}  // namespace

void mcp_tasks_rows(const McpTasksBenchEnv& env, const std::function<void(std::string)>& row) {
  McpServer c({env.llmx, env.url, env.home, {}});
  json::Parser parser;
  c.request("initialize", R"({"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"tasks":{}},)"
                      R"("clientInfo":{"name":"bench","version":"1"}})");
  const std::string call = R"({"name":"llmx","arguments":{"prompt":"@mock:echo hi"})";
  const std::string stateless_meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                     R"("io.modelcontextprotocol/clientCapabilities":{}})";
  std::vector<double> created, finished, plain, stateless;
  for (int i = 0; i < 60; ++i) {
    auto t0 = steady_clock::now();
    auto id = task_id(parser, c.request("tools/call", call + R"(,"task":{"ttl":60000}})"));
    auto t1 = steady_clock::now();
    c.request("tasks/result", R"({"taskId":")" + id + R"("})");
    auto t2 = steady_clock::now();
    c.request("tools/call", call + "}");
    auto t3 = steady_clock::now();
    c.request("tools/call", call + "," + stateless_meta + "}");
    auto t4 = steady_clock::now();
    if (i < 10 || id.empty()) continue;  // warm-up
    created.push_back(ms_between(t0, t1));
    finished.push_back(ms_between(t0, t2));
    plain.push_back(ms_between(t2, t3));
    stateless.push_back(ms_between(t3, t4));
  }
  row(fmt::format("| MCP 2025-11-25 task: tools/call answered with the task | {} |", p90_text(created)));
  row(fmt::format("| MCP 2025-11-25 task: tools/call → tasks/result answer (one-answer turn) | {} |", p90_text(finished)));
  row(fmt::format("| MCP plain tools/call (2025 session, one-answer turn) | {} |", p90_text(plain)));
  row(fmt::format("| MCP 2026-07-28 tools/call without a handshake (one-answer turn) | {} |", p90_text(stateless)));
  c.child().close_stdin();
  c.child().wait(seconds(10));
}

}  // namespace llmx::bench
