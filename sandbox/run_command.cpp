#include "sandbox/run_command.hpp"

#include <atomic>
#include <future>

#include <fmt/format.h>

#include "sandbox/exec_env.hpp"
#include "sandbox/process.hpp"

namespace llmx::sandbox {

namespace {

// Counts the output on the loop thread and stops a child that says too much.
class Collector : public ProcessHandler {
 public:
  Collector(ProcessLoop& loop, size_t max_bytes) : loop_(loop), max_bytes_(max_bytes) {}
  void on_output(Stream, std::string_view bytes) override {
    total_ += bytes.size();
    if (total_ > max_bytes_ && !over_.exchange(true))
      if (auto id = id_.load()) loop_.kill(id);
  }
  void on_exit(ExecResult result) override { done_.set_value(std::move(result)); }
  // After spawn(): the id, and the kill on_output could not send before it was known.
  void started(uint64_t id) {
    id_ = id;
    if (over_) loop_.kill(id);
  }
  std::future<ExecResult> result() { return done_.get_future(); }
  bool over() const { return over_; }

 private:
  ProcessLoop& loop_;
  size_t max_bytes_;
  uint64_t total_ = 0;  // loop thread only
  std::atomic<bool> over_{false};
  std::atomic<uint64_t> id_{0};
  std::promise<ExecResult> done_;
};

}  // namespace

workspace::CommandOutput run_command(const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& extra_env,
                                     std::chrono::milliseconds timeout, size_t max_bytes) {
  workspace::CommandOutput out;
  if (argv.empty()) {
    out.failure = "empty command";
    return out;
  }
  SpawnRequest req;
  req.argv = argv;
  req.env = current_process_env(false);
  for (const auto& [k, v] : extra_env) req.env[k] = v;
  req.timeout_ms = timeout.count();
  req.max_capture_bytes = max_bytes + 1;  // whole output kept up to the limit
  auto& loop = shared_process_loop();
  auto collector = std::make_shared<Collector>(loop, max_bytes);
  auto done = collector->result();
  collector->started(loop.spawn(std::move(req), collector));
  auto r = done.get();
  out.out = std::move(r.stdout_text);
  out.err = std::move(r.stderr_text);
  out.exit_code = r.exit_code;
  if (!r.spawn_error.empty())
    out.failure = r.spawn_error;
  else if (r.timed_out)
    out.failure = fmt::format("`{}` timed out after {} ms", argv[0], timeout.count());
  else if (collector->over())
    out.failure = fmt::format("`{}` wrote more than {} bytes", argv[0], max_bytes);
  return out;
}

}  // namespace llmx::sandbox
