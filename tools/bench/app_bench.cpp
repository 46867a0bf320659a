#include "app_bench.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "bench_stats.hpp"
#include "process.hpp"
#include "protocol/base/json_reader.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// One `llmx app-server` spoken to with v2 requests; reads replies and notifications by kind.
class AppServer {
 public:
  explicit AppServer(const AppBenchEnv& env)
      : child_({env.llmx, "app-server"},
               {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}}) {}

  bool initialize() {
    child_.write_line(R"({"id":0,"method":"initialize","params":{"clientInfo":{"name":"bench","version":"1"}}})");
    return result_of(0, seconds(10)).has_value();
  }

  // thread/start; the thread id, or nullopt.
  std::optional<std::string> start_thread() {
    auto id = send("thread/start", "{}");
    auto r = result_of(id, seconds(10));
    if (!r) return std::nullopt;
    return thread_ids_[id];
  }

  int64_t start_turn(const std::string& thread, const std::string& prompt) {
    return send("turn/start", fmt::format(R"({{"threadId":"{}","input":[{{"type":"text","text":"{}"}}]}})", thread, prompt));
  }

  int64_t send(std::string_view method, const std::string& params) {
    int64_t id = next_id_++;
    child_.write_line(fmt::format(R"({{"id":{},"method":"{}","params":{}}})", id, method, params));
    return id;
  }

  // Reads until `n` turn/completed notifications arrived; returns how many came with status
  // completed (others and missing ones are failures).
  std::pair<size_t, size_t> wait_turns_completed(size_t n, milliseconds timeout) {
    size_t ok = 0, failed = 0;
    auto deadline = steady_clock::now() + timeout;
    while (ok + failed < n) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
      if (left.count() <= 0) break;
      auto line = child_.read_line(left);
      if (!line) break;
      if (line->find(R"("method":"turn/completed")") == std::string::npos) {
        note(*line);
        continue;
      }
      ++(line->find(R"("status":"completed")") != std::string::npos ? ok : failed);
    }
    return {ok, failed + (n - ok - failed)};
  }

  Child& child() { return child_; }

 private:
  // Remembers thread ids of thread/start replies (the only results we need to read).
  void note(const std::string& line) {
    if (line.find(R"("thread":{)") == std::string::npos || line.find(R"("result")") == std::string::npos) return;
    try {
      auto root = parser_.parse(line);
      auto obj = root.get_object().value_unsafe();
      auto id = json::get_int(obj, "id");
      auto result = json::get(obj, "result");
      if (!id || !result) return;
      auto thread = json::get(result->get_object().value_unsafe(), "thread");
      if (auto tid = thread ? json::get_string(thread->get_object().value_unsafe(), "id") : std::nullopt)
        thread_ids_[*id] = std::string(*tid);
    } catch (const std::exception&) {
    }
  }

  // Reads until the reply to `id`; its line when it is a result.
  std::optional<std::string> result_of(int64_t id, milliseconds timeout) {
    auto deadline = steady_clock::now() + timeout;
    std::string want = fmt::format(R"("id":{},)", id);
    for (;;) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto line = child_.read_line(left);
      if (!line) return std::nullopt;
      note(*line);
      if (line->starts_with("{" + want) && line->find(R"("method")") == std::string::npos) {
        if (line->find(R"("error")") != std::string::npos) return std::nullopt;
        return line;
      }
    }
  }

  Child child_;
  json::Parser parser_;
  int64_t next_id_ = 1;
  std::map<int64_t, std::string> thread_ids_;
};

}  // namespace

void app_rows(const AppBenchEnv& env, const std::function<void(std::string)>& row) {
  {
    std::vector<double> samples;
    for (int i = 0; i < 20; ++i) {
      auto t0 = steady_clock::now();
      AppServer s(env);
      if (!s.initialize()) continue;
      samples.push_back(ms_between(t0, steady_clock::now()));
      s.child().close_stdin();
      s.child().wait(seconds(5));
    }
    row(fmt::format("| app-server: spawn → initialize response (median of {}) | {:.2f} ms |", samples.size(),
                    median(samples)));
  }
  {
    AppServer s(env);
    s.initialize();
    auto thread = s.start_thread();
    std::vector<double> samples;
    for (int i = 0; thread && i < 50; ++i) {
      auto t0 = steady_clock::now();
      s.start_turn(*thread, "hello @mock:text deltas=4");
      if (s.wait_turns_completed(1, seconds(10)).first == 1) samples.push_back(ms_between(t0, steady_clock::now()));
    }
    std::sort(samples.begin(), samples.end());
    row(fmt::format("| app-server: one text turn, turn/start → turn/completed (median / p90 of {}) | {:.2f} ms / "
                    "{:.2f} ms |",
                    samples.size(), median(samples), samples.empty() ? 0.0 : samples[samples.size() * 9 / 10]));
  }
  for (int n : env.parallel) {
    AppServer s(env);
    s.initialize();
    long rss0 = s.child().peak_rss_kib();
    double cpu0 = s.child().cpu_seconds();
    auto t0 = steady_clock::now();
    std::vector<std::string> threads;
    for (int i = 0; i < n; ++i)
      if (auto t = s.start_thread()) threads.push_back(*t);
    for (const auto& t : threads) s.start_turn(t, "parallel @mock:text deltas=8");
    auto [ok, failed] = s.wait_turns_completed(threads.size(), seconds(300));
    failed += static_cast<size_t>(n) - threads.size();
    double wall = ms_between(t0, steady_clock::now()) / 1000.0;
    double cpu = s.child().cpu_seconds() - cpu0;
    long rss = s.child().peak_rss_kib();
    row(fmt::format("| app-server: {} threads turning at once (thread/start + turn/start each) | {:.0f} turns/s, "
                    "{} failed, server CPU {:.3f} s ({:.3f} ms per thread+turn), peak RSS {:.1f} MB ({:+.1f} MB "
                    "over idle) |",
                    n, ok / wall, failed, cpu, cpu * 1000.0 / n, rss / 1024.0, (rss - rss0) / 1024.0));
  }
}

}  // namespace llmx::bench
