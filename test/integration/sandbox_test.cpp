// The sandbox end to end (issue 11): hostile commands run by the model through `llmx mcp-server`
// and `llmx exec` turns, and through `llmx sandbox`, with the server holding an API key. Judged
// from outside: the key never reaches the model, no process outlives its turn or a killed or
// terminated server, the hostname stays, and a terminated server still leaves its rollouts.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kKey = "sk-llmx-sandbox-test-key-4711";

std::string hostname() {
  utsname u{};
  ::uname(&u);
  return u.nodename;
}

// tools/call arguments: workspace-write in `cwd`, never asking.
std::string sandboxed(const TempDir& cwd) {
  return R"("sandbox":"workspace-write","approval-policy":"never","cwd":)" + json_quote(cwd.path());
}

}  // namespace

TEST_CASE("sandbox/turn: the API key never reaches a command or the model") {
  TempDir ws{"llmx-sandbox-ws"};
  McpOptions o;
  o.env = {{"LLMX_API_KEY", kKey}, {"MY_DB_PASSWORD", kKey}};
  McpServerFixture f(o);
  // A stored key too, as `llmx login` leaves it.
  f.home.write("auth.json", std::string("{\"OPENAI_API_KEY\":\"") + kKey + "\"}\n");
  f.mcp.initialize();
  // The server sealed the key away: its own /proc environ no longer shows it.
  CHECK_FALSE(contains(read_file("/proc/" + std::to_string(f.mcp.process().pid()) + "/environ"), kKey));
  const std::string attack =
      "env; cat /proc/[0-9]*/environ; cat /proc/" + std::to_string(f.mcp.process().pid()) +
      "/environ; cat " + f.home.file("auth.json") + " " + f.home.file(".env") +
      "; grep -rE sandbox-test-key-471[1] " + f.home.path() + " /proc/[0-9]*/cmdline; echo attack-done";
  auto id = f.mcp.call_llmx("@mock:shell quote=100000 cmd=" + attack, sandboxed(ws));
  auto resp = f.mcp.wait_for_response(id, 30s);
  CHECK(contains(result_text(resp), "attack-done"));
  for (const auto& out : tool_messages(recorded_requests(f.mock))) CHECK_FALSE(contains(out, kKey));
  CHECK_FALSE(contains(result_text(resp), kKey));
  // ...and the model was still called with it.
  CHECK(contains(recorded_requests(f.mock).line(), "attack-done"));
}

TEST_CASE("sandbox/turn: no process outlives its turn, and the hostname cannot change") {
  TempDir ws{"llmx-sandbox-ws"};
  InitializedMcp f;
  const auto daemon = unique_sleep(600);
  ProcessSweeper sweep{daemon};
  const std::string host = hostname();
  auto id = f.mcp.call_llmx("@mock:shell quote=4000 cmd=setsid " + daemon[0] + " " + daemon[1] +
                                " & nohup " + daemon[0] + " " + daemon[1] +
                                " >/dev/null 2>&1 & sleep 0.2; hostname llmx-pwned; echo turn-done",
                            sandboxed(ws));
  auto resp = f.mcp.wait_for_response(id, 30s);
  CHECK(contains(result_text(resp), "turn-done"));
  CHECK(wait_until_no_process(daemon, 2s));
  CHECK(hostname() == host);
}

TEST_CASE("sandbox/server: SIGTERM mid-command kills the command and its daemons, then exits cleanly") {
  TempDir ws{"llmx-sandbox-ws"};
  InitializedMcp f;
  const auto daemon = unique_sleep(601), top = unique_sleep(602);
  ProcessSweeper sweep{daemon}, sweep2{top};
  auto id = f.mcp.call_llmx("@mock:shell timeout_ms=120000 cmd=setsid " + daemon[0] + " " + daemon[1] +
                                " & " + top[0] + " " + top[1],
                            sandboxed(ws));
  REQUIRE(wait_until_running(daemon, 1));
  REQUIRE(wait_until_running(top, 1));
  f.mcp.process().kill(SIGTERM);
  auto status = f.mcp.process().wait(10s);
  CHECK(status.exited);
  CHECK(status.code == 0);
  CHECK(wait_until_no_process(daemon, 2s));
  CHECK(wait_until_no_process(top, 2s));
  // The conversation's rollout is complete JSON lines and records the aborted turn.
  auto rollouts = rollout_files(f.home.file("sessions"));
  REQUIRE(rollouts.size() == 1);
  const std::string text = read_file(rollouts[0]);
  CAPTURE(text);
  CHECK(contains(text, "turn_aborted"));
  CHECK(text.back() == '\n');
}

TEST_CASE("sandbox/server: kill -9 mid-command leaves no command, child or daemon running") {
  TempDir ws{"llmx-sandbox-ws"};
  InitializedMcp f;
  const auto daemon = unique_sleep(603), child = unique_sleep(604), top = unique_sleep(605);
  ProcessSweeper sweep{daemon}, sweep2{child}, sweep3{top};
  f.mcp.call_llmx("@mock:shell timeout_ms=120000 cmd=setsid " + daemon[0] + " " + daemon[1] + " & (" + child[0] +
                      " " + child[1] + " &) ; " + top[0] + " " + top[1],
                  sandboxed(ws));
  REQUIRE(wait_until_running(daemon, 1));
  REQUIRE(wait_until_running(child, 1));
  REQUIRE(wait_until_running(top, 1));
  f.mcp.process().kill(SIGKILL);
  f.mcp.process().wait(5s);
  CHECK(wait_until_no_process(daemon, 2s));
  CHECK(wait_until_no_process(child, 2s));
  CHECK(wait_until_no_process(top, 2s));
}

TEST_CASE("sandbox/cli: llmx sandbox killed mid-command takes the whole command with it") {
  TempDir ws{"llmx-sandbox-ws"};
  TempDir home{"llmx-sandbox-home"};
  const auto daemon = unique_sleep(606), top = unique_sleep(607);
  ProcessSweeper sweep{daemon}, sweep2{top};
  for (int sig : {SIGKILL, SIGTERM}) {
    CAPTURE(sig);
    ChildProcess p({.argv = {LLMX_BIN, "sandbox", "--mode", "workspace-write", "--", "sh", "-c",
                             "setsid " + daemon[0] + " " + daemon[1] + " & exec " + top[0] + " " + top[1]},
                    .env = {{"LLMX_HOME", home.path()}, {"HOME", home.path()}},
                    .cwd = ws.path()});
    REQUIRE(wait_until_running(daemon, 1));
    REQUIRE(wait_until_running(top, 1));
    p.kill(sig);
    p.wait(5s);
    CHECK(wait_until_no_process(daemon, 2s));
    CHECK(wait_until_no_process(top, 2s));
  }
}

TEST_CASE("sandbox/cli: --check reports every layer") {
  TempDir home{"llmx-sandbox-home"};
  ChildProcess p({.argv = {LLMX_BIN, "sandbox", "--check"}, .env = {{"LLMX_HOME", home.path()}, {"HOME", home.path()}}});
  const std::string out = p.read_all_stdout();
  CHECK(p.wait().ok());
  for (const char* layer : {"namespaces: ", "pid 1: ", "capabilities: ", "landlock: ", "seccomp: ", "sandbox: complete"})
    CHECK(contains(out, layer));
}

TEST_CASE("sandbox/exec: SIGINT mid-command aborts the turn, kills the command and exits 130") {
  TempDir ws{"llmx-sandbox-ws"};
  TempDir home{"llmx-sandbox-home"};
  MockLlm mock;
  const auto top = unique_sleep(608);
  ProcessSweeper sweep{top};
  auto env = llmx_env(home.path(), mock.url());
  ChildProcess p({.argv = {LLMX_BIN, "exec", "--skip-git-repo-check", "--core-events", "-s", "workspace-write",
                           "@mock:shell timeout_ms=120000 cmd=" + top[0] + " " + top[1]},
                  .env = env,
                  .cwd = ws.path()});
  REQUIRE(wait_until_running(top, 1));
  p.kill(SIGINT);
  const std::string out = p.read_all_stdout();
  auto status = p.wait(10s);
  CHECK(status.exited);
  CHECK(status.code == 130);
  CHECK(contains(out, "\"turn_aborted\""));
  CHECK(wait_until_no_process(top, 2s));
  bool recorded = false;
  for (const auto& file : rollout_files(home.file("sessions"))) recorded = contains(read_file(file), "turn_aborted");
  CHECK(recorded);
}
