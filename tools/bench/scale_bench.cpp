#include "scale_bench.hpp"

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// Requests go out in windows: the replies of one are read before the next is sent, so what the
// server queues for us (and counts in its RSS) stays small.
constexpr int kWindow = 500;

}  // namespace

void scale_rows(const ScaleBenchEnv& env, const std::function<void(std::string)>& row) {
  for (int n : env.counts) {
    Child child({env.llmx, "mcp-server"},
                {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
    child.write_line(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
    if (!child.read_line(seconds(10))) {
      row(fmt::format("| {} idle conversations | the server did not answer initialize |", n));
      return;
    }
    child.write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    long rss0 = child.peak_rss_kib();
    auto t0 = steady_clock::now();
    int created = 0, failed = 0;
    for (int sent = 0; sent < n;) {
      int batch = std::min(kWindow, n - sent);
      std::string lines;
      for (int i = 0; i < batch; ++i)
        lines += fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"newConversation","params":{{}}}})"
                             "\n",
                             ++sent);
      child.write_raw(lines);
      for (int got = 0; got < batch;) {
        auto line = child.read_line(seconds(60));
        if (!line) break;
        if (line->find(R"("method")") != std::string::npos) continue;  // a notification
        ++got;
        ++(line->find(R"("conversationId")") != std::string::npos ? created : failed);
      }
    }
    double create_s = ms_between(t0, steady_clock::now()) / 1000.0;
    long rss = child.peak_rss_kib();
    auto t1 = steady_clock::now();
    child.close_stdin();
    int code = child.wait(seconds(300));
    double exit_s = ms_between(t1, steady_clock::now()) / 1000.0;
    row(fmt::format("| {} idle conversations in one process | created at {:.0f}/s ({} failed), peak RSS {:.0f} MB "
                    "({:.1f} KB per conversation), exit after stdin closes {:.2f} s{} |",
                    n, created / create_s, failed + (n - created - failed), rss / 1024.0,
                    created ? (rss - rss0) * 1.024 / created : 0.0, exit_s,
                    code == 0 ? "" : fmt::format(" (exit code {})", code)));
  }
}

}  // namespace llmx::bench
