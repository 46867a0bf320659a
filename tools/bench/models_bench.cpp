#include "models_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bench_stats.hpp"
#include "process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// The answer line to one app-server request ("" on timeout); notifications are skipped.
std::string ask(Child& child, int64_t id, const std::string& method, const std::string& params) {
  child.write_line(fmt::format(R"({{"id":{},"method":"{}","params":{}}})", id, method, params));
  auto want = fmt::format(R"("id":{},)", id);
  while (auto line = child.read_line(seconds(20)))
    if (line->find(want) != std::string::npos && line->find(R"("method")") == std::string::npos) return *line;
  return "";
}

}  // namespace

void models_rows(const ModelsBenchEnv& env, const std::function<void(std::string)>& row) {
  std::vector<double> first;
  std::vector<double> cached;
  for (int run = 0; run < 5; ++run) {
    Child child({env.llmx, "app-server"},
                {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
    int64_t id = 0;
    ask(child, ++id, "initialize", R"({"clientInfo":{"name":"bench","version":"1"}})");
    auto t0 = steady_clock::now();
    auto answer = ask(child, ++id, "model/list", "{}");
    if (answer.find(R"("source":"provider")") == std::string::npos) {
      row("| model/list | the proxy's list did not arrive |");
      return;
    }
    first.push_back(ms_between(t0, steady_clock::now()));
    for (int i = 0; i < 200; ++i) {
      auto t = steady_clock::now();
      ask(child, ++id, "model/list", R"({"limit":50})");
      cached.push_back(ms_between(t, steady_clock::now()));
    }
    child.close_stdin();
    child.wait(seconds(5));
  }
  std::sort(cached.begin(), cached.end());
  row(fmt::format("| model/list, first (fetches /models and /model/info from the proxy; median of {}) | {:.2f} ms |",
                  first.size(), median(first)));
  row(fmt::format("| model/list from the registry's cache, request → answer (median / p99 of {}) | {:.3f} ms / {:.3f} ms |",
                  cached.size(), median(cached), cached[cached.size() * 99 / 100]));
}

}  // namespace llmx::bench
