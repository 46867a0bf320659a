// Spawning in every sandbox mode (the time to the first output is printed; llmx-bench measures
// the goal), spawning from many threads at once, and independence from the server's SIGCHLD
// disposition.
#include <doctest/doctest.h>
#include "test/support/temp_dir.hpp"
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "sandbox/process.hpp"

using namespace llmx;
using namespace llmx::sandbox;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct FirstByte : ProcessHandler {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Clock::time_point> first;
  std::optional<ExecResult> result;
  void on_output(Stream, std::string_view) override {
    std::lock_guard lock(mu);
    if (!first) first = Clock::now();
  }
  void on_exit(ExecResult r) override {
    std::lock_guard lock(mu);
    result = std::move(r);
    cv.notify_all();
  }
  ExecResult wait() {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, 30s, [&] { return result.has_value(); }));
    return *result;
  }
};

struct Stats {
  double median_ms, p95_ms;
};

// Time from spawn() to the first byte the child writes: includes clone, sandbox setup, exec and
// the start-up of the program itself (a static-ish `printf` from coreutils).
Stats measure(ProcessLoop& loop, const std::string& cwd, std::optional<SandboxPolicy> policy,
              int runs = 15) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    SpawnRequest r;
    r.argv = {"/usr/bin/printf", "x"};
    r.cwd = cwd;
    r.env = {{"PATH", "/usr/bin:/bin"}};
    r.sandbox = policy;
    r.sandbox_cwd = cwd;
    auto h = std::make_shared<FirstByte>();
    const auto t0 = Clock::now();
    loop.spawn(std::move(r), h);
    ExecResult res = h->wait();
    REQUIRE(res.spawn_error == "");
    REQUIRE(res.stdout_text == "x");
    REQUIRE(h->first.has_value());
    if (i >= 5) ms.push_back(std::chrono::duration<double, std::milli>(*h->first - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 95 / 100]};
}

}  // namespace

TEST_CASE("process: spawns in every sandbox mode run and stream their first output") {
  namespace fs = std::filesystem;
  llmx::test::TempDir dir{"llmx-latency"};
  const std::string plain = dir.file("plain"), repo = dir.file("repo");
  fs::create_directories(plain);
  fs::create_directories(repo + "/.git");

  ProcessLoop loop;
  SandboxPolicy ww;
  ww.mode = SandboxMode::workspace_write;
  SandboxPolicy ww_net = ww;
  ww_net.network_access = true;
  SandboxPolicy ro;  // read-only

  const Stats none = measure(loop, plain, std::nullopt);
  const Stats s_ro = measure(loop, plain, ro);
  const Stats s_ww = measure(loop, plain, ww);
  const Stats s_ww_net = measure(loop, plain, ww_net);
  const Stats s_git = measure(loop, repo, ww);
  MESSAGE("spawn -> first byte, median / p95 (ms):"
          << "\n  unsandboxed:                         " << none.median_ms << " / " << none.p95_ms
          << "\n  read-only (Landlock + seccomp):      " << s_ro.median_ms << " / " << s_ro.p95_ms
          << "\n  workspace-write (Landlock + seccomp): " << s_ww.median_ms << " / " << s_ww.p95_ms
          << "\n  workspace-write + network (Landlock): " << s_ww_net.median_ms << " / "
          << s_ww_net.p95_ms << "\n  workspace-write, git repo (+ mount ns): " << s_git.median_ms
          << " / " << s_git.p95_ms);
  // The figures are for reading only: the 5 ms goal is measured by `llmx-bench --sections tools`,
  // never asserted by a timed test.
}

TEST_CASE("process: spawn() is safe from many threads at once") {
  ProcessLoop loop;
  std::vector<std::shared_ptr<FirstByte>> handlers(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = t * 16; i < (t + 1) * 16; ++i) {
        handlers[i] = std::make_shared<FirstByte>();
        SpawnRequest r;
        r.argv = {"/usr/bin/printf", "%s", std::to_string(i)};
        r.cwd = "/";
        r.env = {{"PATH", "/usr/bin:/bin"}};
        loop.spawn(std::move(r), handlers[i]);
      }
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < 64; ++i) {
    ExecResult r = handlers[i]->wait();
    CHECK(r.exit_code == 0);
    CHECK(r.stdout_text == std::to_string(i));
  }
}

TEST_CASE("process: exit statuses survive a server that ignores SIGCHLD or reaps all children") {
  struct sigaction old {
  }, ign{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGCHLD, &ign, &old);  // would auto-reap ordinary children
  ProcessLoop loop;
  auto h = std::make_shared<FirstByte>();
  SpawnRequest r;
  r.argv = {"/bin/sh", "-c", "sleep 0.1; exit 7"};
  r.cwd = "/";
  loop.spawn(r, h);
  // Another component reaping "any child" must not steal ours either.
  std::thread reaper([] {
    for (int i = 0; i < 50; ++i) {
      ::waitpid(-1, nullptr, WNOHANG);
      std::this_thread::sleep_for(5ms);
    }
  });
  ExecResult res = h->wait();
  reaper.join();
  ::sigaction(SIGCHLD, &old, nullptr);
  CHECK(res.exit_code == 7);
  CHECK(res.spawn_error == "");
}
