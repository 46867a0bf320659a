// llmx-bench: starts mock-llm and `llmx mcp-server` and measures what the foundation issue asks
// for: spawn->initialize, one text turn, N parallel conversations (turns/s, failures, CPU and
// memory per conversation), and server CPU per streamed delta. Prints a Markdown report.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app_bench.hpp"
#include "bench_stats.hpp"
#include "exec_bench.hpp"
#include "streamer_bench.hpp"
#include "process.hpp"
#include "protocol/base/json_reader.hpp"
#include "mcp_bench.hpp"
#include "mcp_server_driver.hpp"
#include "acp_bench.hpp"
#include "alloc_bench.hpp"
#include "models_bench.hpp"
#include "scale_bench.hpp"
#include "slow_client_bench.hpp"
#include "soak_bench.hpp"
#include "mcp_http_bench.hpp"
#include "mcp_tasks_bench.hpp"
#include "nodes_bench.hpp"
#include "threads_bench.hpp"
#include "tools_bench.hpp"

using namespace llmx;
using llmx::bench::median;
using namespace std::chrono;
namespace fs = std::filesystem;

namespace {

struct Env {
  std::string llmx, mock, url, home;
};

double ms_since(steady_clock::time_point t0) { return duration<double, std::milli>(steady_clock::now() - t0).count(); }


std::string exe_dir() { return fs::read_symlink("/proc/self/exe").parent_path().string(); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llmx-bench: latency, throughput and cost of llmx mcp-server against mock-llm"};
  Env env;
  env.llmx = exe_dir() + "/llmx";
  env.mock = exe_dir() + "/mock-llm";
  std::vector<int> parallel = {1, 10, 100, 500, 1000};
  std::string readme;
  int deltas = 2000;
  app.add_option("--llmx", env.llmx, "llmx binary");
  app.add_option("--mock", env.mock, "mock-llm binary");
  app.add_option("--parallel", parallel, "Parallel conversation counts")->delimiter(',');
  app.add_option("--deltas", deltas, "Deltas of a long turn in the per-delta rows (a short one has a tenth)");
  app.add_option("--readme", readme, "Write the report between the bench markers of this README");
  std::vector<std::string> sections = {"startup", "turn", "parallel", "deltas",   "app",   "tools",
                                       "exec",    "mcp",  "threads",  "streamer", "nodes", "mcp-tasks",
                                       "mcp-http", "acp", "models", "scale", "slow-client", "allocations"};
  // Not in the default set: it runs for minutes (--sections soak --soak-minutes 60).
  app.add_option("--sections", sections,
                 "Sections to run: startup, turn, parallel, deltas, app, tools, exec, mcp, threads, streamer, nodes, "
                 "mcp-tasks, mcp-http, acp, models, scale, slow-client, allocations, soak")
      ->delimiter(',');
  bench::McpBenchEnv mcp_env{"", "", "", LLMX_BENCH_NODE, LLMX_BENCH_MCP_SERVER, 200};
  app.add_option("--node", mcp_env.node, "node, for the MCP rows' server");
  app.add_option("--mcp-server", mcp_env.fake_server, "The MCP rows' server script (fake_mcp_server.mjs)");
  app.add_option("--mcp-conversations", mcp_env.conversations, "Conversations sharing one MCP server");
  std::vector<int> streamer_concurrency = {100, 1000};
  app.add_option("--streamer-concurrency", streamer_concurrency, "Concurrent streams for the streamer rows")
      ->delimiter(',');
  std::vector<int> app_parallel = {200, 1000};
  app.add_option("--app-parallel", app_parallel, "Thread counts for the app-server parallel rows")->delimiter(',');
  std::vector<int> thread_counts = {1000, 10000, 50000};
  app.add_option("--threads", thread_counts, "Stored thread counts for the listing rows")->delimiter(',');
  std::vector<int> idle_counts = {10000, 20000, 50000, 100000};
  double soak_minutes = 5;
  app.add_option("--soak-minutes", soak_minutes, "How long the soak section runs");
  int soak_conversations = 1000;
  app.add_option("--soak-conversations", soak_conversations,
                 "Distinct conversations in the soak (fewer reach their compaction cycles sooner)");
  app.add_option("--idle", idle_counts, "Idle conversation counts for the scale rows")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  auto wanted = [&](std::string_view s) { return std::find(sections.begin(), sections.end(), s) != sections.end(); };

  auto home = fs::temp_directory_path() / fmt::format("llmx-bench-{}", getpid());
  fs::create_directories(home);
  env.home = home.string();
  // Every child gets a scratch HOME: the login shells of the model's commands must not read this
  // machine's profiles (they cost ~100 ms per command here, and vary from machine to machine).
  ::setenv("HOME", env.home.c_str(), 1);
  std::optional<bench::Child> mock;
  auto url = bench::start_mock_llm(mock, env.mock);
  if (!url) {
    fmt::print(stderr, "mock-llm did not start\n");
    return 1;
  }
  env.url = *url;

  std::string report;
  auto row = [&](std::string s) {
    fmt::print("{}\n", s);
    std::fflush(stdout);
    report += s + "\n";
  };
  row("| measurement | result |");
  row("|---|---|");

  // 1. spawn -> initialize
  if (wanted("startup")) {
    // And when the request after it is answered: that one waits for the engine to start.
    // The floor (issue 18, point 5): spawning `cat` and reading one echoed line. The two
    // alternate, so both see the machine as it is at that moment.
    std::vector<double> samples, next, floor;
    for (int i = 0; i < 20; ++i) {
      auto t0 = steady_clock::now();
      bench::McpServer s({env.llmx, env.url, env.home});
      if (s.initialize()) {
        samples.push_back(ms_since(t0));
        if (!s.request("tools/list", "{}").empty()) next.push_back(ms_since(t0));
      }
      s.child().close_stdin();
      s.child().wait(seconds(5));

      t0 = steady_clock::now();
      bench::Child cat({"/bin/cat"}, {});
      cat.write_line("{}");
      if (cat.read_line(seconds(5))) floor.push_back(ms_since(t0));
      cat.close_stdin();
      cat.wait(seconds(5));
    }
    row(fmt::format("| spawn → initialize response (median of {}; floor: spawn `cat` → one echoed line, {:.2f} ms; "
                    "goal within 2×) | {:.2f} ms ({:.1f}× the floor); the next request (tools/list) answered at "
                    "{:.2f} ms |",
                    samples.size(), median(floor), median(samples), median(samples) / std::max(median(floor), 1e-9),
                    median(next)));
  }

  // 2. one text turn, sequential
  if (wanted("turn")) {
    bench::McpServer s({env.llmx, env.url, env.home});
    s.initialize();
    std::vector<double> samples;
    for (int i = 0; i < 50; ++i) {
      auto t0 = steady_clock::now();
      auto id = s.call("hello @mock:text deltas=4");
      if (s.wait_for({id}, seconds(10)).completed == 1) samples.push_back(ms_since(t0));
    }
    std::sort(samples.begin(), samples.end());
    row(fmt::format("| one text turn, tools/call → result (median / p90 of 50) | {:.2f} ms / {:.2f} ms |",
                    median(samples), samples.empty() ? 0.0 : samples[samples.size() * 9 / 10]));
  }

  // 3. N parallel conversations in one process
  for (int n : wanted("parallel") ? parallel : std::vector<int>{}) {
    bench::McpServer s({env.llmx, env.url, env.home});
    s.initialize();
    long rss0 = s.child().peak_rss_kib();
    double cpu0 = s.child().cpu_seconds();
    auto t0 = steady_clock::now();
    std::set<int64_t> ids;
    for (int i = 0; i < n; ++i) ids.insert(s.call("parallel @mock:text deltas=8"));
    auto out = s.wait_for(ids, seconds(300));
    double wall = ms_since(t0) / 1000.0;
    double cpu = s.child().cpu_seconds() - cpu0;
    long rss = s.child().peak_rss_kib();
    row(fmt::format("| {} parallel conversations | {:.0f} turns/s, {} failed, server CPU {:.3f} s ({:.3f} ms per "
                    "conversation+turn), peak RSS {:.1f} MB ({:+.1f} MB over idle) |",
                    n, out.completed / wall, out.failures, cpu, cpu * 1000.0 / n, rss / 1024.0,
                    (rss - rss0) / 1024.0));
  }

  // 4. server CPU per streamed delta
  if (wanted("deltas")) {
    bench::McpServer s({env.llmx, env.url, env.home});
    s.initialize();
    auto warm = s.call(fmt::format("warm @mock:long deltas={}", deltas));
    s.wait_for({warm}, seconds(60));
    // Long and short turns alternate; the cost per delta is their difference, so what a turn
    // costs whatever its length (a conversation, its rollout, the request) drops out.
    const int turns = 10, short_deltas = deltas / 10;
    double cpu_long = 0, cpu_short = 0;
    std::vector<double> pairs;  // each long turn less the short one after it, per delta
    long switches = 0;
    size_t notes = 0;
    for (int i = 0; i < turns; ++i) {
      double pair[2] = {0, 0};
      for (int n : {deltas, short_deltas}) {
        double cpu0 = s.child().cpu_seconds();
        long switches0 = s.child().context_switches();
        auto id = s.call(fmt::format("long @mock:long deltas={}", n));
        auto done = s.wait_for({id}, seconds(60));
        pair[n == deltas ? 0 : 1] = s.child().cpu_seconds() - cpu0;
        if (n == deltas) {
          notes += done.notifications;
          switches += s.child().context_switches() - switches0;
        }
      }
      cpu_long += pair[0];
      cpu_short += pair[1];
      pairs.push_back((pair[0] - pair[1]) * 1e6 / (deltas - short_deltas));
    }
    // The median of the pairs is the figure: on a shared VM one pair in ten may catch a stall of
    // the host, which the mean carries whole.
    row(fmt::format("| server CPU per streamed delta ({} turns × {} deltas against {} × {}, {} notifications a long "
                    "turn) | {:.2f} µs (median of {} pairs; mean {:.2f} µs; {:.2f} µs a delta with the turn's own cost, "
                    "{:.2f} context switches) |",
                    turns, deltas, turns, short_deltas, notes / turns, median(pairs), pairs.size(),
                    (cpu_long - cpu_short) * 1e6 / (turns * static_cast<double>(deltas - short_deltas)),
                    cpu_long * 1e6 / (turns * deltas), static_cast<double>(switches) / (turns * deltas)));
    // A model's deltas as they really come: a few at a time on many streams. The cost per delta
    // is the difference between long and short answers, so turn start and end drop out.
    const int streams = 100, short_turn = 30, long_turn = 300;
    auto cpu_of = [&](int each) {
      double before = s.child().cpu_seconds();
      std::set<int64_t> ids;
      for (int i = 0; i < streams; ++i) ids.insert(s.call(fmt::format("@mock:slow delay_ms=10 deltas={}", each)));
      s.wait_for(ids, seconds(120));
      return s.child().cpu_seconds() - before;
    };
    const double short_cpu = cpu_of(short_turn), long_cpu = cpu_of(long_turn);
    row(fmt::format("| server CPU per streamed delta, {} streams at once, each a delta every 10 ms ({} against {} "
                    "deltas a turn) | {:.1f} µs |",
                    streams, long_turn, short_turn,
                    (long_cpu - short_cpu) * 1e6 / (streams * static_cast<double>(long_turn - short_turn))));
  }

  // 5. the app server: v2 threads and turns (app_bench.cpp)
  if (wanted("app")) bench::app_rows({env.llmx, env.url, env.home, app_parallel}, row);

  // 6. tools: child start with and without the sandbox, output throughput (tools_bench.cpp)
  if (wanted("tools")) bench::tools_rows({env.llmx, env.url, env.home}, row);

  // 6a. `llmx exec` for people, scripts and the SDK (exec_bench.cpp)
  if (wanted("exec")) bench::exec_rows({env.llmx, env.url, env.home}, row);

  // 6b. the MCP client: overhead per call, one server shared by many conversations (mcp_bench.cpp)
  if (wanted("mcp")) {
    mcp_env.llmx = env.llmx;
    mcp_env.url = env.url;
    mcp_env.home = env.home;
    bench::mcp_rows(mcp_env, row);
  }

  // 6c. MCP revisions of the mcp-server: a call as a task, a 2026 call (mcp_tasks_bench.cpp)
  if (wanted("mcp-tasks")) bench::mcp_tasks_rows({env.llmx, env.url, env.home}, row);

  // 6e. the Agent Client Protocol (acp_bench.cpp)
  if (wanted("acp")) bench::acp_rows({env.llmx, env.url, env.home}, row);

  // 6e'. allocations per streamed delta on each stdio wire, counted by a preloaded library
  if (wanted("allocations")) bench::alloc_rows({env.llmx, env.url, env.home, LLMX_BENCH_ALLOC_COUNTER}, row);

  // 6f. what the provider serves: model/list, first and from the cache (models_bench.cpp)
  if (wanted("models")) bench::models_rows({env.llmx, env.url, env.home}, row);

  // 6g. scale: idle conversations, their memory, and the exit after stdin closes (scale_bench.cpp)
  if (wanted("scale")) bench::scale_rows({env.llmx, env.url, env.home, idle_counts}, row);

  // 6h. a client that reads slower than the model writes: back-pressure, pings (slow_client_bench.cpp)
  // A model faster than llmx itself can turn deltas into lines, once sharing the two cores with
  // llmx as an equal and once at nice 19 (as a provider elsewhere would not take our CPU), and
  // one slower than llmx but faster than the client, where pausing the streams bounds the queue.
  if (wanted("slow-client")) {
    bench::slow_client_rows({env.llmx, env.url, env.home}, row);
    bench::slow_client_rows({.llmx = env.llmx, .url = env.url, .home = env.home, .niced_mock = env.mock}, row);
    bench::slow_client_rows({.llmx = env.llmx, .url = env.url, .home = env.home, .read_mb_per_s = 5, .delay_ms = 10}, row);
  }

  // 6i. the soak: mixed load for minutes, RSS and open files sampled (soak_bench.cpp)
  if (wanted("soak"))
    bench::soak_rows({env.llmx, env.url, env.home, mcp_env.node, mcp_env.fake_server, soak_minutes, soak_conversations}, row);

  // 6d. the same over MCP Streamable HTTP (mcp_http_bench.cpp)
  if (wanted("mcp-http")) bench::mcp_http_rows({env.llmx, env.url, env.home}, row);

  // 7. the model streamer alone against the mock (streamer_bench.cpp)
  if (wanted("streamer")) bench::streamer_rows({env.url, mock->pid(), streamer_concurrency}, row);

  // 7b. worker nodes: the remote hop, and turns/s with 1..3 nodes (nodes_bench.cpp)
  if (wanted("nodes")) bench::nodes_rows({env.llmx, env.url, env.home}, row);

  // 8. stored threads: listing and resume (threads_bench.cpp)
  if (wanted("threads")) bench::threads_rows({env.llmx, env.url, env.home, thread_counts}, row);

  fs::remove_all(home);
  if (!readme.empty()) {
    std::ifstream in(readme);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto a = text.find("<!-- bench:start -->");
    auto b = text.find("<!-- bench:end -->");
    if (a != std::string::npos && b != std::string::npos && b > a) {
      text = text.substr(0, a) + "<!-- bench:start -->\n" + report + text.substr(b);
      std::ofstream(readme) << text;
    }
  }
  return 0;
}
