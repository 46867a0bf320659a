#include "slow_client_bench.hpp"

#include <optional>
#include <thread>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
constexpr auto kPingEvery = milliseconds(50);

}  // namespace

void slow_client_rows(const SlowClientBenchEnv& env, const std::function<void(std::string)>& row) {
  std::optional<Child> mock;
  std::string url = env.url;
  if (!env.niced_mock.empty()) {
    auto line = start_mock_llm(mock, env.niced_mock, 19);
    if (!line) return row("| slow client | mock-llm (nice 19) did not start |");
    url = *line;
  }
  Child child({env.llmx, "mcp-server"},
              {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", url}, {"LLMX_API_KEY", "bench"}});
  child.write_line(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
  if (!child.read_line(seconds(10))) return row("| slow client | the server did not answer initialize |");
  child.write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  const double cpu0 = child.cpu_seconds();
  std::string calls;
  const auto prompt = env.delay_ms > 0 ? fmt::format("@mock:slow delay_ms={} deltas={}", env.delay_ms, env.deltas)
                                       : fmt::format("@mock:long deltas={}", env.deltas);
  for (int i = 1; i <= env.turns; ++i)
    calls += fmt::format(
        R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"llmx","arguments":{{"prompt":"{}"}}}}}})"
        "\n",
        i, prompt);
  child.write_raw(calls);

  // Read at the client's pace, pinging every 50 ms; a ping's wait is from its send to its reply.
  const auto t0 = steady_clock::now();
  std::map<int, steady_clock::time_point> pings;
  std::vector<double> waits;
  double slowest = 0, slowest_sent = 0, silence = 0, silence_at = 0;  // the worst wait and when (s into the run) its ping went out
  int next_ping = 0, results = 0;
  size_t bytes = 0, deltas = 0;
  auto last_ping = t0;
  const double bytes_per_ms = env.read_mb_per_s * 1e6 / 1000.0;
  while (results < env.turns) {
    const auto now = steady_clock::now();
    if (now - last_ping >= kPingEvery) {
      pings[next_ping] = now;
      child.write_line(fmt::format(R"({{"jsonrpc":"2.0","id":"p{}","method":"ping"}})", next_ping++));
      last_ping = now;
    }
    // Keep to the reading rate: sleep while ahead of it.
    const double allowed = ms_between(t0, now) * bytes_per_ms;
    if (static_cast<double>(bytes) > allowed) {
      std::this_thread::sleep_for(milliseconds(2));
      continue;
    }
    const auto asked = steady_clock::now();
    auto line = child.read_line(seconds(120));
    if (!line) break;
    if (double waited = ms_between(asked, steady_clock::now()); waited > silence) {
      silence = waited;  // the longest the server wrote nothing while we were ready to read
      silence_at = ms_between(t0, asked) / 1000.0;
    }
    bytes += line->size() + 1;
    if (line->find(R"("agent_message_delta")") != std::string::npos) {
      ++deltas;
    } else if (auto at = line->find(R"("id":"p)"); at != std::string::npos && line->find(R"("result")") != std::string::npos) {
      int id = std::atoi(line->c_str() + at + 7);
      if (auto it = pings.find(id); it != pings.end()) {
        waits.push_back(ms_between(it->second, steady_clock::now()));
        if (waits.back() > slowest) {
          slowest = waits.back();
          slowest_sent = ms_between(t0, it->second) / 1000.0;
        }
        pings.erase(it);
      }
    } else if (line->find(R"("result")") != std::string::npos && line->find(R"("method")") == std::string::npos) {
      ++results;
    }
  }
  const double secs = ms_between(t0, steady_clock::now()) / 1000.0;
  const double cpu = child.cpu_seconds() - cpu0;
  const long rss = child.peak_rss_kib();
  child.close_stdin();
  child.wait(seconds(60));
  std::sort(waits.begin(), waits.end());
  auto pct = [&](double p) { return waits.empty() ? 0.0 : waits[std::min(waits.size() - 1, static_cast<size_t>(waits.size() * p))]; };
  auto model = env.delay_ms > 0 ? fmt::format(", the model writing a delta every {} ms", env.delay_ms) : std::string();
  if (mock) model += " (mock-llm at nice 19)";
  row(fmt::format("| slow client: {} turns x {} deltas{} to one client reading {:.0f} MB/s | {} of {} results, {:.0f} MB in "
                  "{:.1f} s; server peak RSS {:.0f} MB; ping {:.1f} ms (p99 {:.1f}, max {:.1f} sent at {:.1f} s, {} pings); longest silence {:.0f} ms at {:.1f} s; server CPU "
                  "{:.2f} us per delta |",
                  env.turns, env.deltas, model, env.read_mb_per_s, results, env.turns, bytes / 1e6, secs, rss / 1024.0,
                  pct(0.5), pct(0.99), slowest, slowest_sent, waits.size(), silence, silence_at,
                  deltas ? cpu * 1e6 / static_cast<double>(deltas) : 0.0));
}

}  // namespace llmx::bench
