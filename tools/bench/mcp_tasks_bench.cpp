#include "mcp_tasks_bench.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "process.hpp"
#include "protocol/base/json_reader.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// One mcp-server spoken to line by line; the reply to a request is the first line with its id
// and no method (notifications are skipped).
class Client {
 public:
  explicit Client(const McpTasksBenchEnv& env)
      : child_({env.llmx, "mcp-server"},
               {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}}) {}

  // The reply's text, "" on timeout.
  std::string ask(const std::string& method, const std::string& params) {
    auto id = next_++;
    child_.write_line(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"{}","params":{}}})", id, method, params));
    auto needle = fmt::format(R"("id":{},)", id);
    while (auto line = child_.read_line(seconds(20)))
      if (line->find(needle) != std::string::npos && line->find(R"("method")") == std::string::npos) return *line;
    return "";
  }
  std::string task_id(const std::string& reply) {
    try {
      auto root = parser_.parse(reply);
      auto v = root.at_pointer("/result/task/taskId");
      if (v.is_string()) return std::string(v.get_string().value_unsafe());
    } catch (const std::exception&) {
    }
    return "";
  }
  Child& child() { return child_; }

 private:
  Child child_;
  json::Parser parser_;
  int64_t next_ = 1;
};

std::string p90_text(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? "-" : fmt::format("{:.2f} ms (p90 {:.2f})", median(v), v[v.size() * 9 / 10]);
}

}  // namespace

void mcp_tasks_rows(const McpTasksBenchEnv& env, const std::function<void(std::string)>& row) {
  Client c(env);
  c.ask("initialize", R"({"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"tasks":{}},)"
                      R"("clientInfo":{"name":"bench","version":"1"}})");
  const std::string call = R"({"name":"llmx","arguments":{"prompt":"@mock:echo hi"})";
  const std::string stateless_meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                     R"("io.modelcontextprotocol/clientCapabilities":{}})";
  std::vector<double> created, finished, plain, stateless;
  for (int i = 0; i < 60; ++i) {
    auto t0 = steady_clock::now();
    auto id = c.task_id(c.ask("tools/call", call + R"(,"task":{"ttl":60000}})"));
    auto t1 = steady_clock::now();
    c.ask("tasks/result", R"({"taskId":")" + id + R"("})");
    auto t2 = steady_clock::now();
    c.ask("tools/call", call + "}");
    auto t3 = steady_clock::now();
    c.ask("tools/call", call + "," + stateless_meta + "}");
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
