#include "acp_bench.hpp"

#include <fmt/format.h>

#include <vector>

#include "bench_stats.hpp"
#include "process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// One `llmx acp`, spoken to one request at a time.
class Acp {
 public:
  explicit Acp(const AcpBenchEnv& env)
      : child_({env.llmx, "acp"}, {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}}) {}
  ~Acp() {
    child_.close_stdin();
    child_.wait(seconds(5));
  }
  // The answer line to one request ("" on timeout); notifications are skipped.
  std::string request(const std::string& method, const std::string& params) {
    auto id = next_id_++;
    child_.write_line(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"{}","params":{}}})", id, method, params));
    auto want = fmt::format(R"("id":{},)", id);
    while (auto line = child_.read_line(seconds(20)))
      if (line->find(want) != std::string::npos && line->find(R"("method")") == std::string::npos) return *line;
    return "";
  }

 private:
  Child child_;
  int64_t next_id_ = 0;
};

std::string session_of(const std::string& line) {
  auto at = line.find(R"("sessionId":")");
  if (at == std::string::npos) return "";
  at += 13;
  return line.substr(at, line.find('"', at) - at);
}

}  // namespace

void acp_rows(const AcpBenchEnv& env, const std::function<void(std::string)>& row) {
  const std::string init = R"({"protocolVersion":1,"clientCapabilities":{}})";
  std::vector<double> spawn;
  for (int i = 0; i < 20; ++i) {
    auto t0 = steady_clock::now();
    Acp a(env);
    if (a.request("initialize", init).find(R"("protocolVersion":1)") == std::string::npos) continue;
    spawn.push_back(ms_between(t0, steady_clock::now()));
  }
  row(fmt::format("| acp: spawn → initialize response (median of {}) | {:.2f} ms |", spawn.size(), median(spawn)));
  Acp a(env);
  a.request("initialize", init);
  auto session = session_of(a.request("session/new", fmt::format(R"({{"cwd":"{}","mcpServers":[]}})", env.home)));
  std::vector<double> turns;
  for (int i = 0; !session.empty() && i < 60; ++i) {
    auto t0 = steady_clock::now();
    auto r = a.request("session/prompt", fmt::format(R"({{"sessionId":"{}","prompt":[{{"type":"text","text":"hello @mock:text deltas=4"}}]}})",
                                                     session));
    if (i >= 10 && r.find("end_turn") != std::string::npos) turns.push_back(ms_between(t0, steady_clock::now()));
  }
  row(fmt::format("| acp: one prompt turn, session/prompt → stop reason (4 deltas, median of {}) | {} |", turns.size(),
                  p90_text(turns)));
}

}  // namespace llmx::bench
