// A client that stops reading stdout must not make the server grow without bound (issue 5, bad
// input): past LLMX_MAX_OUTPUT_BYTES the server says so on stderr and closes stdout. A client
// whose stdout is gone (the cap reached, or its read end closed) ends the session (issue 18):
// the turn writing to it is interrupted and recorded so, and the server exits while stdin is
// still open.
#include <doctest/doctest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

// `llmx mcp-server` on raw pipes, so a test can stall or close the client's end of stdout.
struct RawServer {
  pid_t pid = -1;
  int in = -1;   // the server's stdin (ours to write)
  int out = -1;  // the server's stdout (ours to read, or not)
  std::string err_path;

  RawServer(const TempDir& home, const MockLlm& mock, const char* max_output,
            std::vector<std::pair<std::string, std::string>> env = {}, std::vector<std::string> args = {}) {
    int i[2], o[2];
    REQUIRE(::pipe(i) == 0);
    REQUIRE(::pipe(o) == 0);
    err_path = home.file("stderr.txt");
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(i[0], 0);
      ::dup2(o[1], 1);
      int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(err, 2);
      ::close(i[1]);
      ::close(o[0]);
      ::setenv("HOME", home.path().c_str(), 1);
      ::setenv("LLMX_HOME", home.path().c_str(), 1);
      ::setenv("LLMX_BASE_URL", mock.url().c_str(), 1);
      ::setenv("LLMX_API_KEY", "test", 1);
      ::setenv("LLMX_MAX_OUTPUT_BYTES", max_output, 1);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> argv{const_cast<char*>(LLMX_BIN), const_cast<char*>("mcp-server")};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(LLMX_BIN, argv.data());
      ::_exit(127);
    }
    ::close(i[0]);
    ::close(o[1]);
    in = i[1];
    out = o[0];
  }
  ~RawServer() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
  }
  void send(const std::string& lines) {
    REQUIRE(::write(in, lines.data(), lines.size()) == static_cast<ssize_t>(lines.size()));
  }
  // Initialize, then one long turn streaming `deltas` deltas.
  void start_long_turn(int deltas) {
    send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
         "\n" +
         fmt::format(R"({{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"llmx","arguments":{{"prompt":"@mock:long deltas={}"}}}}}})",
                     deltas) +
         "\n");
  }
  std::string stderr_text() const { return read_file(err_path); }
  // Waits (bounded) for stderr to say `what`.
  bool wait_stderr(std::string_view what) {
    for (int i = 0; i < 600; ++i) {
      if (contains(stderr_text(), what)) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  long peak_rss_kib = 0;  // the server's, once it exited (wait4)
  // Waits up to `limit` for the server to exit; its wait status, or nullopt.
  std::optional<int> wait_exit(std::chrono::milliseconds limit) {
    int status = 0;
    for (auto waited = 0ms; waited < limit; waited += 50ms) {
      rusage usage{};
      if (::wait4(pid, &status, WNOHANG, &usage) == pid) {
        pid = -1;
        peak_rss_kib = usage.ru_maxrss;
        return status;
      }
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  }
};

// The one rollout file under `home` (empty when there is none).
std::string only_rollout(const TempDir& home) {
  auto files = rollout_files(home.file("sessions"));
  return files.empty() ? "" : read_file(files.front());
}

}  // namespace

TEST_CASE("stalled client: output queued for a client that does not read is bounded, the turn is interrupted and the server exits (RSS)") {
  TempDir home{"llmx-stalled"};
  MockLlm mock;
  RawServer server(home, mock, "2000000");
  server.start_long_turn(100000);  // its stdout is never read: the client has stalled
  bool said = server.wait_stderr("stopped reading");
  auto err = server.stderr_text();
  INFO("stderr: " << err);
  CHECK(said);
  CHECK(contains(err, "LLMX_MAX_OUTPUT_BYTES"));
  // stdin stays open: the server ends by itself, its turn interrupted and on record.
  auto status = server.wait_exit(20s);
  REQUIRE(status.has_value());
  CHECK(server.peak_rss_kib > 0);
#ifndef LLMX_SANITIZED  // ASan's shadow memory and quarantine make RSS say nothing here
  CHECK(server.peak_rss_kib < 200 * 1024);  // bounded: tens of MB, not the gigabytes 100,000 deltas would queue
#endif
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  auto rollout = only_rollout(home);
  CHECK(contains(rollout, "turn_aborted"));
}

TEST_CASE("stalled client: a client that closes its end of our stdout mid-turn ends the session") {
  TempDir home{"llmx-stdout-closed"};
  MockLlm mock;
  RawServer server(home, mock, "268435456");
  server.start_long_turn(1000000);
  // Read until the turn streams, then close the read end: the next write fails with EPIPE.
  std::string seen;
  char buf[4096];
  for (int i = 0; i < 2000 && !contains(seen, "agent_message"); ++i) {
    auto n = ::read(server.out, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<size_t>(n));
    if (seen.size() > (1u << 20)) seen.erase(0, seen.size() - 4096);
  }
  REQUIRE(contains(seen, "agent_message"));
  ::close(server.out);
  server.out = -1;
  auto status = server.wait_exit(20s);
  INFO("stderr: " << server.stderr_text());
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(contains(server.stderr_text(), "closed it"));
  auto rollout = only_rollout(home);
  INFO("rollout: " << rollout.substr(rollout.size() > 3000 ? rollout.size() - 3000 : 0));
  CHECK(contains(rollout, "turn_aborted"));
  // The model stream stopped with the turn: the mock saw one request, cut off long before its end.
}

TEST_CASE("stalled client: a ping sent while megabytes of notifications are queued is answered ahead of them") {
  TempDir home{"llmx-ping-ahead"};
  MockLlm mock;
  RawServer server(home, mock, "268435456");
  server.start_long_turn(200000);
  // Nothing is read for a while: the turn's notifications pile up in the server.
  std::this_thread::sleep_for(1500ms);
  server.send(R"({"jsonrpc":"2.0","id":"p1","method":"ping"})" "\n");
  // The reply comes after what the pipe already held and the line being written, not after the
  // backlog; the tools/call (id 2) is still streaming behind it.
  std::string seen;
  size_t before_reply = std::string::npos;
  char buf[65536];
  for (int i = 0; i < 20000 && before_reply == std::string::npos; ++i) {
    auto n = ::read(server.out, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<size_t>(n));
    if (auto at = seen.find(R"("id":"p1")"); at != std::string::npos) before_reply = at;
  }
  REQUIRE(before_reply != std::string::npos);
  CHECK(before_reply < 1024 * 1024);  // what the pipe held and a write or two, not the backlog
  // It is a whole line of its own, and the call it overtook was not answered yet.
  const auto line_start = seen.rfind('\n', before_reply);
  CHECK(contains(seen.substr(line_start + 1, 20), R"({"jsonrpc":"2.0")"));
  CHECK_FALSE(contains(seen, R"("id":2,"result")"));
  // The backlog follows it: more notifications than were read before the reply.
  size_t after = seen.size() - before_reply;
  for (int i = 0; i < 20000 && after < 2 * before_reply + (1u << 20); ++i) {
    auto n = ::read(server.out, buf, sizeof buf);
    if (n <= 0) break;
    after += static_cast<size_t>(n);
  }
  CHECK(after >= 2 * before_reply + (1u << 20));
}

TEST_CASE("stalled client: a client that falls behind pauses the model stream instead of being buffered for, and gets every delta") {
  TempDir home{"llmx-backpressure"};
  MockLlm mock;
  // Paused past 1 MB unread; a stall of 3 s is longer than the stream's 1 s idle timeout (both
  // times kSlowdown), which must not count while we hold the stream back ourselves.
  RawServer server(home, mock, "268435456", {{"LLMX_OUTPUT_PAUSE_BYTES", "1000000"}, {"LLMX_LOG", "debug"}},
                   {"-c", "model_providers.litellm.stream_idle_timeout_ms=" + std::to_string(1000 * kSlowdown), "-c",
                    "model_providers.litellm.stream_max_retries=0"});
  constexpr int kDeltas = 200000;
  server.start_long_turn(kDeltas);
  std::this_thread::sleep_for(3s * kSlowdown);
  // Now read everything, until the call's result.
  std::string seen, tail;
  size_t deltas = 0;
  char buf[65536];
  bool done = false;
  for (int i = 0; i < 200000 && !done; ++i) {
    auto n = ::read(server.out, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (auto end = seen.find('\n'); end != std::string::npos; end = seen.find('\n', start)) {
      std::string_view line(seen.data() + start, end - start);
      if (contains(line, R"("type":"agent_message_delta")")) ++deltas;
      if (contains(line, R"("id":2,)")) {
        done = true;
        tail = std::string(line);
      }
      start = end + 1;
    }
    seen.erase(0, start);
  }
  REQUIRE(done);
  INFO("result: " << tail.substr(0, 400));
  CHECK_FALSE(contains(tail, "idle timeout"));
  CHECK_FALSE(contains(tail, R"("isError":true)"));
  CHECK(deltas == static_cast<size_t>(kDeltas));
  ::close(server.in);
  server.in = -1;
  auto status = server.wait_exit(20s);
  REQUIRE(status.has_value());
  // The stream was paused while the client lagged, and read on when it caught up. (What that
  // saves is measured by llmx-bench --sections slow-client: here 71 MB peak against 174 MB
  // unpaused, but a loaded machine moves both.)
  const auto err = server.stderr_text();
  CHECK(contains(err, "the client is behind; the model streams of 1 conversation(s) pause"));
  CHECK(contains(err, "the client is caught up; the model streams of 1 conversation(s) read on"));
  MESSAGE("server peak RSS " << server.peak_rss_kib / 1024 << " MiB");
}
