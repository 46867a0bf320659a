#include "streamer_bench.hpp"

#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>

#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/model_streamer.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

double self_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double pid_cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Totals {
  int completed = 0, failed = 0;
  long deltas = 0;  // text deltas + tool-call fragments, as streamed by the mock
};

struct DriverState {
  DriverState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  ModelRequest base;
  int to_start = 0, in_flight = 0;
  uint64_t seq = 0;
  Totals totals;
  std::shared_ptr<std::promise<Totals>> done;
  static inline const char* name = "llmx.bench.streamer_driver";
};

using driver_ptr = turn_executor_actor::stateful_pointer<DriverState>;

void launch(driver_ptr self) {
  auto& st = self->state;
  ModelRequest req = st.base;
  req.seq = ++st.seq;
  req.call_id_prefix = fmt::format("bench_{}", req.seq);
  --st.to_start;
  ++st.in_flight;
  spawn_model_streamer(self, caf::actor_cast<turn_executor_actor>(self), std::move(req));
}

void finished(driver_ptr self, bool ok) {
  auto& st = self->state;
  ++(ok ? st.totals.completed : st.totals.failed);
  --st.in_flight;
  if (st.to_start > 0) return launch(self);
  if (st.in_flight == 0) {
    st.done->set_value(st.totals);
    self->quit();
  }
}

// Stands where a turn executor would: keeps `concurrency` requests streaming until `total` ran.
turn_executor_actor::behavior_type driver(driver_ptr self, ModelRequest base, int total, int concurrency,
                                          std::shared_ptr<std::promise<Totals>> done) {
  self->state.base = std::move(base);
  self->state.to_start = total;
  self->state.done = std::move(done);
  for (int i = 0; i < concurrency && self->state.to_start > 0; ++i) launch(self);
  return {
      [=](start_atom, TaskSpec&) {},
      [=](interrupt_atom) {},
      [=](pause_atom, bool) {},
      [=](InjectInput&) {},
      [=](ModelEvents& batch) {
        bool complete = false;
        for (const auto& e : batch.events) complete |= e.is<Completed>();
        if (complete) finished(self, true);
      },
      [=](ModelRetrying&) {},
      [=](ModelFailed&) { finished(self, false); },
      [=](WireFallback&) {},
      [=](ExecOutput&) {},
      [=](McpProgress&) {},
      [=](McpElicitation&) { return McpElicitationReply{R"({"action":"decline"})"}; },
  };
}

}  // namespace

void streamer_rows(const StreamerBenchEnv& env, const std::function<void(std::string)>& row) {
  caf::actor_system_config cfg;
  configure_system(cfg);
  caf::actor_system sys{cfg};

  struct Load {
    std::string name, prompt;
    long deltas_per_request;
  };
  const std::vector<Load> loads = {
      {"text, 20 deltas each", "@mock:long deltas=20", 20},
      {"tool call, 100 argument fragments each", "@mock:toolstream fragments=100", 100},
  };
  for (const auto& load : loads) {
    for (int concurrency : env.concurrency) {
      ModelRequest base;
      base.prompt.model = "bench-model";
      base.prompt.instructions = "bench";
      base.prompt.input = {user_message(load.prompt)};
      base.provider.id = "bench";
      base.provider.base_url = env.url;
      base.provider.request_max_retries = 0;
      base.provider.stream_max_retries = 0;
      base.user_agent = "llmx-bench";
      // Warm the connection pool and the mock's threads first.
      {
        auto warm = std::make_shared<std::promise<Totals>>();
        auto f = warm->get_future();
        sys.spawn(driver, base, concurrency, concurrency, warm);
        f.wait_for(seconds(120));
      }
      auto done = std::make_shared<std::promise<Totals>>();
      auto result = done->get_future();
      double cpu0 = self_cpu_seconds(), mock0 = pid_cpu_seconds(env.mock_pid);
      auto t0 = steady_clock::now();
      sys.spawn(driver, base, env.requests, concurrency, done);
      if (result.wait_for(seconds(600)) != std::future_status::ready) {
        row(fmt::format("| streamer: {} at {} concurrent | timed out |", load.name, concurrency));
        continue;
      }
      auto totals = result.get();
      double wall = duration<double>(steady_clock::now() - t0).count();
      double cpu = self_cpu_seconds() - cpu0, mock = pid_cpu_seconds(env.mock_pid) - mock0;
      double deltas = static_cast<double>(totals.completed) * static_cast<double>(load.deltas_per_request);
      row(fmt::format("| streamer alone: {} requests ({}), {} concurrent over one keep-alive pool | {:.0f} "
                      "requests/s, {} failed; streamer CPU {:.1f} µs per request, {:.2f} µs per delta; mock-llm "
                      "CPU {:.1f} µs per request |",
                      env.requests, load.name, concurrency, totals.completed / wall, totals.failed,
                      cpu * 1e6 / env.requests, deltas > 0 ? cpu * 1e6 / deltas : 0.0, mock * 1e6 / env.requests));
    }
  }
}

}  // namespace llmx::bench
