#include "tools_bench.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "process.hpp"
#include "protocol/base/base64.hpp"
#include "protocol/base/json_reader.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;


double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// Counts output bytes and reports the end through a future; the loop thread calls it.
class Waiter : public sandbox::ProcessHandler {
 public:
  void on_output(sandbox::Stream, std::string_view bytes) override { bytes_ += bytes.size(); }
  void on_exit(sandbox::ExecResult r) override {
    ended_ = steady_clock::now();
    done_.set_value(std::move(r));
  }
  sandbox::ExecResult wait() { return done_.get_future().get(); }
  uint64_t bytes() const { return bytes_; }  // read after wait()
  steady_clock::time_point ended() const { return ended_; }

 private:
  uint64_t bytes_ = 0;
  steady_clock::time_point ended_;
  std::promise<sandbox::ExecResult> done_;
};

sandbox::SpawnRequest request(std::vector<std::string> argv, const std::string& cwd) {
  sandbox::SpawnRequest req;
  req.argv = std::move(argv);
  req.cwd = cwd;
  req.env = sandbox::current_process_env();
  req.timeout_ms = 60000;
  return req;
}

// (a) spawn() -> on_exit of /bin/true, n times; the medians and p90s without a sandbox, under
// workspace-write as the server may set it up (namespaces + init + mounts + Landlock + seccomp),
// through a user namespace (what an unprivileged server pays: a memory copy instead of vfork),
// and with Landlock and seccomp alone (the layering before issue 11, for comparison).
void spawn_latency(sandbox::ProcessLoop& loop, const std::string& cwd, const std::function<void(std::string)>& row) {
  constexpr int kRuns = 200;
  struct Variant {
    const char* name;
    bool sandboxed;
    sandbox::Isolation isolation;
  };
  const Variant variants[] = {
      {"no sandbox", false, sandbox::Isolation::automatic},
      {"workspace-write sandbox", true, sandbox::Isolation::automatic},
      {"workspace-write, user namespace", true, sandbox::Isolation::user_namespace},
      {"workspace-write, Landlock + seccomp only", true, sandbox::Isolation::landlock_only},
  };
  for (const auto& v : variants) {
    std::vector<double> samples;
    int not_sandboxed = 0, failed = 0;
    for (int i = 0; i < kRuns + 5; ++i) {  // 5 warm-up runs (the first sandboxed one probes)
      auto req = request({"/bin/true"}, cwd);
      if (v.sandboxed) {
        SandboxPolicy policy;
        policy.mode = SandboxMode::workspace_write;
        req.sandbox = policy;
        req.sandbox_cwd = cwd;
        req.sandbox_options.isolation = v.isolation;
      }
      auto waiter = std::make_shared<Waiter>();
      auto t0 = steady_clock::now();
      loop.spawn(std::move(req), waiter);
      auto r = waiter->wait();
      if (i < 5) continue;
      failed += r.exit_code != 0 || !r.spawn_error.empty();
      not_sandboxed += v.sandboxed && !r.sandboxed;
      samples.push_back(ms_between(t0, waiter->ended()));
    }
    row(fmt::format("| ProcessLoop spawn → exit of `/bin/true`, {} (median / p90 of {}) | {:.2f} ms / {:.2f} ms{}{} |",
                    v.name, kRuns, percentile(samples, 0.5), percentile(samples, 0.9),
                    failed ? fmt::format(", {} failed", failed) : "",
                    not_sandboxed ? fmt::format(", {} not fully sandboxed", not_sandboxed) : ""));
  }
}

// (b) 100 MB of stdout through on_output, every chunk delivered (no live-delta cap); median of 3.
void loop_throughput(sandbox::ProcessLoop& loop, const std::string& cwd, const std::function<void(std::string)>& row) {
  constexpr uint64_t kBytes = 100'000'000;
  std::vector<double> rates;
  uint64_t bytes = 0;
  int bad_exits = 0;
  for (int i = 0; i < 3; ++i) {
    auto req = request({"head", "-c", std::to_string(kBytes), "/dev/zero"}, cwd);
    req.max_delta_chunks = SIZE_MAX;
    auto waiter = std::make_shared<Waiter>();
    auto t0 = steady_clock::now();
    loop.spawn(std::move(req), waiter);
    auto r = waiter->wait();
    bad_exits += r.exit_code != 0;
    bytes = waiter->bytes();
    rates.push_back(static_cast<double>(bytes) / 1e6 / (ms_between(t0, waiter->ended()) / 1000.0));
  }
  row(fmt::format("| ProcessLoop output throughput: 100 MB of stdout through on_output (median / min of 3) | {:.0f} "
                  "MB/s / {:.0f} MB/s ({} bytes delivered per run{}) |",
                  percentile(rates, 0.5), *std::min_element(rates.begin(), rates.end()), bytes,
                  bad_exits ? fmt::format(", {} bad exits", bad_exits) : ""));
}

// (c) `llmx exec --core-events` running a 100 MB (135 MB as base64) command: the exec_command_output_delta
// bytes the client receives and how fast.
void exec_throughput(const ToolsBenchEnv& env, const std::function<void(std::string)>& row) {
  const std::string cwd = env.home + "/exec-cwd";
  fs::create_directories(cwd);
  fs::create_directories(env.home + "/exec-home");  // LLMX_HOME must exist
  const std::string prompt = "@mock:shell timeout_ms=120000 cmd=head -c 100000000 /dev/zero | base64 -w 76";
  auto t0 = steady_clock::now();
  Child child({env.llmx, "exec", "--skip-git-repo-check", "--core-events", "-s", "danger-full-access", "-a", "never", "-C", cwd, "--", prompt},
              {{"LLMX_HOME", env.home + "/exec-home"}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
  child.close_stdin();
  json::Parser parser;
  uint64_t delivered = 0, chunks = 0, captured_total = 0;
  int64_t exit_code = -1;
  steady_clock::time_point begin{}, first_delta{}, last_delta{}, end{};
  bool complete = false;
  while (auto line = child.read_line(seconds(120))) {
    auto now = steady_clock::now();
    // Cheap pre-check: only delta lines are parsed in the hot path.
    if (line->find("\"exec_command_output_delta\"") != std::string::npos) {
      try {
        auto obj = parser.parse(*line).get_object().value_unsafe();
        auto msg = json::get(obj, "msg")->get_object().value_unsafe();
        if (json::get_string(msg, "stream").value_or("") != "stdout") continue;
        auto bytes = base64::decode(json::get_string(msg, "chunk").value_or(""));
        if (!bytes) continue;
        if (chunks++ == 0) first_delta = now;
        last_delta = now;
        delivered += bytes->size();
      } catch (const std::exception&) {
      }
      continue;
    }
    if (line->find("\"exec_command_begin\"") != std::string::npos) begin = now;
    if (line->find("\"exec_command_end\"") != std::string::npos) {
      end = now;
      try {
        auto obj = parser.parse(*line).get_object().value_unsafe();
        auto msg = json::get(obj, "msg")->get_object().value_unsafe();
        exit_code = json::get_int(msg, "exit_code").value_or(-1);
        captured_total = json::get_string(msg, "stdout").value_or("").size();
      } catch (const std::exception&) {
      }
    }
    if (line->find("\"task_complete\"") != std::string::npos) complete = true;
  }
  int code = child.wait(seconds(10));
  double wall = ms_between(t0, steady_clock::now()) / 1000.0;
  double stream_secs = ms_between(begin, end) / 1000.0;
  double live_secs = chunks ? ms_between(first_delta, last_delta) / 1000.0 : 0;
  row(fmt::format("| `llmx exec --core-events`, 100 MB → 135 MB base64 command output, danger-full-access: stdout deltas "
                  "received | {} chunks, {:.1f} MB delivered live ({:.0f} MB/s over the {:.2f} s from the first to "
                  "the last delta); exec_command_begin → end {:.2f} s (whole command {:.0f} MB/s); end event keeps "
                  "{:.2f} MB of stdout; exit {}, turn {}, llmx exit {}, {:.2f} s wall |",
                  chunks, static_cast<double>(delivered) / 1e6,
                  live_secs > 0 ? static_cast<double>(delivered) / 1e6 / live_secs : 0.0, live_secs, stream_secs,
                  stream_secs > 0 ? 135.09 / stream_secs : 0.0, static_cast<double>(captured_total) / 1e6, exit_code,
                  complete ? "complete" : "INCOMPLETE", code, wall));
}

}  // namespace

void tools_rows(const ToolsBenchEnv& env, const std::function<void(std::string)>& row) {
  const std::string cwd = env.home + "/loop-cwd";
  fs::create_directories(cwd);
  {
    sandbox::ProcessLoop loop;
    spawn_latency(loop, cwd, row);
    loop_throughput(loop, cwd, row);
  }
  exec_throughput(env, row);
}

}  // namespace llmx::bench
