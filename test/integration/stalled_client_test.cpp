// A client that stops reading stdout must not make the server grow without bound (issue 5, bad
// input): past LLMX_MAX_OUTPUT_BYTES the server says so on stderr, closes stdout and drops its
// output, and still exits cleanly when stdin closes.
#include <doctest/doctest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

TEST_CASE("stalled client: output queued for a client that does not read is bounded, with a clear error") {
  TempDir home{"llmx-stalled"};
  MockLlm mock;
  int in[2], out[2];
  REQUIRE(::pipe(in) == 0);
  REQUIRE(::pipe(out) == 0);
  auto err_path = home.file("stderr.txt");
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(err, 2);
    ::close(in[1]);
    ::close(out[0]);
    ::setenv("LLMX_HOME", home.path().c_str(), 1);
    ::setenv("LLMX_BASE_URL", mock.url().c_str(), 1);
    ::setenv("LLMX_API_KEY", "test", 1);
    ::setenv("LLMX_MAX_OUTPUT_BYTES", "2000000", 1);
    ::execl(LLMX_BIN, LLMX_BIN, "mcp-server", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);  // out[0] stays open and is never read: the client has stalled
  std::string lines =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n" +
      std::string(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"llmx","arguments":{"prompt":"@mock:long deltas=100000"}}})") +
      "\n";
  REQUIRE(::write(in[1], lines.data(), lines.size()) == static_cast<ssize_t>(lines.size()));
  std::string err;
  for (int i = 0; i < 600 && !contains(err, "stopped reading"); ++i) {
    std::this_thread::sleep_for(50ms);
    err = read_file(err_path);
  }
  INFO("stderr: " << err);
  CHECK(contains(err, "the client stopped reading"));
  CHECK(contains(err, "LLMX_MAX_OUTPUT_BYTES"));
  long rss = peak_rss_kib(pid);
  CHECK(rss > 0);
  CHECK(rss < 200 * 1024);  // bounded: tens of MB, not the gigabytes 100,000 deltas would queue
  ::close(in[1]);  // the client goes away: the server finishes and exits
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 400 && !exited; ++i) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(50ms);
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  CHECK(exited);
  ::close(out[0]);
}
