#include "exec_bench.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

struct Run {
  double ms = 0;
  int code = -1;
  size_t lines = 0;
};

// One `llmx exec` from spawn to exit, its stdout drained line by line.
Run run_once(const ExecBenchEnv& env, std::vector<std::string> flags, const std::string& prompt,
             const std::string& cwd) {
  std::vector<std::string> argv = {env.llmx, "exec", "--skip-git-repo-check", "--color", "never", "-C", cwd};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.push_back(prompt);
  Run r;
  auto t0 = steady_clock::now();
  Child child(argv, {{"LLMX_HOME", env.home + "/exec-bench-home"}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
  child.close_stdin();
  while (child.read_line(seconds(30))) ++r.lines;
  r.code = child.wait(seconds(30));
  r.ms = duration<double, std::milli>(steady_clock::now() - t0).count();
  return r;
}

}  // namespace

void exec_rows(const ExecBenchEnv& env, const std::function<void(std::string)>& row) {
  fs::create_directories(env.home + "/exec-bench-home");
  const std::string ws = env.home + "/exec-bench-ws";
  struct Case {
    std::string label;
    std::vector<std::string> flags;
    std::string prompt;
  };
  const std::vector<Case> cases = {
      {"one answer, human output", {}, "hello @mock:text deltas=4"},
      {"one answer, `--json`", {"--json"}, "hello @mock:text deltas=4"},
      {"a task: command + patch + answer, human output", {"-s", "workspace-write"}, "write notes @mock:task"},
      {"a task: command + patch + answer, `--json`", {"--json", "-s", "workspace-write"}, "write notes @mock:task"},
  };
  for (const auto& c : cases) {
    std::vector<double> samples;
    int failed = 0;
    for (int i = 0; i < 20; ++i) {
      fs::remove_all(ws);
      fs::create_directories(ws);
      Run r = run_once(env, c.flags, c.prompt, ws);
      if (r.code != 0) {
        ++failed;
        continue;
      }
      samples.push_back(r.ms);
    }
    std::sort(samples.begin(), samples.end());
    row(fmt::format("| `llmx exec`, {}: spawn → exit (median / p90 of {}{}) | {:.1f} ms / {:.1f} ms |", c.label,
                    samples.size(), failed ? fmt::format(", {} failed", failed) : "", median(samples),
                    samples.empty() ? 0.0 : samples[samples.size() * 9 / 10]));
  }
  fs::remove_all(ws);
}

}  // namespace llmx::bench
