#include "nodes_bench.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "mcp_server_driver.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

// `llmx node` processes on free loopback ports.
struct Nodes {
  std::vector<std::unique_ptr<Child>> children;
  std::string list;  // for --nodes
  Nodes(const NodesBenchEnv& env, int n) {
    for (int i = 0; i < n; ++i) {
      auto c = std::make_unique<Child>(
          std::vector<std::string>{env.llmx, "node", "--exit-on-stdin-eof", "--listen", "127.0.0.1:0"},
          std::map<std::string, std::string>{{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
      auto line = c->read_line(seconds(10));
      if (line && line->starts_with("listening ")) list += (list.empty() ? "" : ",") + line->substr(10);
      children.push_back(std::move(c));
    }
  }
  double cpu() const {
    double sum = 0;
    for (const auto& c : children) sum += c->cpu_seconds();
    return sum;
  }
};

McpServerEnv server_env(const NodesBenchEnv& env, const Nodes* nodes) {
  McpServerEnv s{env.llmx, env.url, env.home, {}};
  if (nodes) s.args = {"--nodes", nodes->list};
  return s;
}

// Median and p90 of 50 sequential one-text turns.
std::pair<double, double> turn_latency(McpServer& s) {
  std::vector<double> samples;
  for (int i = 0; i < 50; ++i) {
    auto t0 = steady_clock::now();
    auto id = s.call("hello @mock:text deltas=4");
    if (s.wait_for({id}, seconds(10)).completed == 1) samples.push_back(ms_between(t0, steady_clock::now()));
  }
  std::sort(samples.begin(), samples.end());
  return {median(samples), samples.empty() ? 0.0 : samples[samples.size() * 9 / 10]};
}

struct DeltaCost {
  double front_us = 0, node_us = 0, wall_us = 0;
};

// CPU per streamed delta over 10 turns of 2000 deltas (after a warm-up turn).
DeltaCost delta_cost(McpServer& s, const Nodes* nodes) {
  constexpr int kTurns = 10, kDeltas = 2000;
  s.wait_for({s.call(fmt::format("warm @mock:long deltas={}", kDeltas))}, seconds(60));
  const double front0 = s.child().cpu_seconds(), node0 = nodes ? nodes->cpu() : 0;
  auto t0 = steady_clock::now();
  for (int i = 0; i < kTurns; ++i) s.wait_for({s.call(fmt::format("long @mock:long deltas={}", kDeltas))}, seconds(60));
  const double n = kTurns * kDeltas;
  return {(s.child().cpu_seconds() - front0) * 1e6 / n, nodes ? (nodes->cpu() - node0) * 1e6 / n : 0.0,
          ms_between(t0, steady_clock::now()) * 1e3 / n};
}

}  // namespace

void nodes_rows(const NodesBenchEnv& env, const std::function<void(std::string)>& row) {
  {
    McpServer local(server_env(env, nullptr));
    local.initialize();
    Nodes one(env, 1);
    McpServer front(server_env(env, &one));
    front.initialize();
    auto [l50, l90] = turn_latency(local);
    auto [r50, r90] = turn_latency(front);
    row(fmt::format("| nodes: one text turn, tools/call → result (median / p90 of 50): in-process vs through one node | "
                    "{:.2f} / {:.2f} ms vs {:.2f} / {:.2f} ms: the hop adds {:.2f} ms per turn |",
                    l50, l90, r50, r90, r50 - l50));
    auto lc = delta_cost(local, nullptr);
    auto rc = delta_cost(front, &one);
    row(fmt::format("| nodes: CPU per streamed delta (10 turns × 2000): in-process vs front + node | {:.2f} µs vs "
                    "{:.2f} + {:.2f} = {:.2f} µs (wall {:.2f} vs {:.2f} µs per delta) |",
                    lc.front_us, rc.front_us, rc.node_us, rc.front_us + rc.node_us, lc.wall_us, rc.wall_us));
  }
  auto parallel_row = [&](const Nodes* nodes, const std::string& label) {
    McpServer s(server_env(env, nodes));
    s.initialize();
    const double front0 = s.child().cpu_seconds(), node0 = nodes ? nodes->cpu() : 0;
    auto t0 = steady_clock::now();
    std::set<int64_t> ids;
    for (int i = 0; i < env.parallel; ++i) ids.insert(s.call("parallel @mock:text deltas=8"));
    auto out = s.wait_for(ids, seconds(300));
    const double wall = ms_between(t0, steady_clock::now()) / 1000.0;
    row(fmt::format("| nodes: {} conversations at once, {} | {:.0f} turns/s, {} failed; CPU front {:.2f} s, nodes "
                    "{:.2f} s |",
                    env.parallel, label, out.completed / wall, out.failures, s.child().cpu_seconds() - front0,
                    nodes ? nodes->cpu() - node0 : 0.0));
  };
  parallel_row(nullptr, "in-process");
  for (int n : env.node_counts) {
    Nodes nodes(env, n);
    parallel_row(&nodes, fmt::format("{} node{}", n, n == 1 ? "" : "s"));
  }
}

}  // namespace llmx::bench
