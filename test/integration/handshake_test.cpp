// The stdio servers answer `initialize` before their actors start (issue 18, point 5): the answer
// is the session's own, what follows it in the same write is served in order, and a signal while
// a server waits for that first line ends it. The llmx binary answers it before it loads the
// engine (and CAF) when it can read the command line; else the engine answers it, as early.
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

std::string init_line(int id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
         R"("capabilities":{"elicitation":{}},"clientInfo":{"name":"handshake","version":"3"}}})";
}

std::unique_ptr<ChildProcess> start_server(const TempDir& home, const MockLlm& mock,
                                          const std::string& subcommand = "mcp-server",
                                          const std::vector<std::string>& options = {}) {
  SpawnOptions o;
  o.argv = {LLMX_BIN, subcommand};
  o.argv.insert(o.argv.end(), options.begin(), options.end());
  o.env = llmx_env(home.path(), mock.url());
  o.cwd = home.path();
  return std::make_unique<ChildProcess>(std::move(o));
}

// The next `n` lines on the server's stdout, each one JSON message.
std::vector<Message> read_replies(ChildProcess& p, size_t n) {
  std::vector<Message> replies;
  while (replies.size() < n) {
    auto line = p.read_line();
    REQUIRE(line);
    replies.emplace_back(*line);
  }
  return replies;
}

// Whether the process's main thread is blocked in read(0, ...) (/proc/<pid>/syscall: number, args).
bool wait_until_reading_stdin(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const std::string path = "/proc/" + std::to_string(pid) + "/syscall";
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    std::string number, fd;
    if (in >> number >> fd && number == "0" && fd == "0x0") return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Whether the process has CAF loaded (/proc/<pid>/maps).
bool maps_caf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line))
    if (line.find("libcaf_core") != std::string::npos) return true;
  return false;
}

// `-mMODEL` (a short option's value joined to it) is a form the binary leaves to the engine's
// command-line parser (tools/llmx/start/early_command.hpp): the engine then reads the first line.
const std::vector<std::string> kLeftToEngine = {"-mgpt-test"};

}  // namespace

TEST_CASE("handshake: initialize answered before the engine starts is the session's own answer") {
  TempDir home;
  MockLlm mock;
  const std::vector<std::pair<std::string, std::string>> servers = {
      {"mcp-server", init_line(1)},
      {"app-server", R"({"id":1,"method":"initialize","params":{"clientInfo":{"name":"handshake","version":"3"}}})"},
      {"acp", R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,)"
              R"("clientCapabilities":{"fs":{"readTextFile":true}}}})"}};
  for (const auto& [subcommand, line] : servers) {
    const auto& shown = subcommand;  // clang 14 cannot capture a structured binding
    CAPTURE(shown);
    auto early = start_server(home, mock, subcommand);
    REQUIRE(early->write_stdin(line + "\n"));
    auto early_reply = early->read_line();
    // The same, answered by the engine when the binary leaves the command line to it.
    auto engine = start_server(home, mock, subcommand, kLeftToEngine);
    REQUIRE(engine->write_stdin(line + "\n"));
    auto engine_reply = engine->read_line();
    // A blank first line leaves initialize to the session, as every line after the first.
    auto late = start_server(home, mock, subcommand);
    REQUIRE(late->write_stdin("\n" + line + "\n"));
    auto late_reply = late->read_line();
    REQUIRE(early_reply);
    REQUIRE(engine_reply);
    REQUIRE(late_reply);
    CHECK(*early_reply == *late_reply);
    CHECK(*engine_reply == *late_reply);
    CHECK(Message(*early_reply).integer("/id") == 1);
    CHECK(Message(*early_reply).has("/result"));
    if (subcommand == "mcp-server") CHECK(Message(*early_reply).has("/result/capabilities/tasks"));
  }
}

TEST_CASE("handshake: what comes behind the MCP initialize in the same write is served, in order") {
  TempDir home;
  MockLlm mock;
  auto p = start_server(home, mock);
  REQUIRE(p->write_stdin(init_line(1) + "\n" + R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n" +
                         R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})" + "\n" +
                         R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
                         R"("capabilities":{},"clientInfo":{"name":"again","version":"1"}}})" "\n" +
                         R"({"jsonrpc":"2.0","id":4,"method":"ping"})" + "\n"));
  auto replies = read_replies(*p, 4);
  CHECK(replies[0].integer("/id") == 1);
  CHECK(replies[1].integer("/id") == 2);
  CHECK(replies[1].str("/result/tools/0/name") == "llmx");
  // The session knows it was initialized: a second one is refused.
  CHECK(replies[2].integer("/id") == 3);
  CHECK(replies[2].integer("/error/code") == -32600);
  CHECK(replies[3].integer("/id") == 4);
  CHECK(replies[3].text("/result") == "{}");
  p->close_stdin();
  CHECK(p->wait(10s).ok());
}

TEST_CASE("handshake: the app server answered early knows its client, and refuses a second initialize") {
  TempDir home;
  MockLlm mock;
  auto p = start_server(home, mock, "app-server");
  REQUIRE(p->write_stdin(R"({"id":1,"method":"initialize","params":{"clientInfo":{"name":"ide","version":"9"}}})" "\n"
                         R"({"id":2,"method":"getUserAgent"})" "\n"
                         R"({"id":3,"method":"initialize","params":{"clientInfo":{"name":"ide","version":"9"}}})" "\n"));
  auto replies = read_replies(*p, 3);
  CHECK(replies[0].integer("/id") == 1);
  CHECK(replies[1].integer("/id") == 2);
  CHECK(replies[1].str("/result/userAgent").ends_with("(ide; 9)"));
  CHECK(replies[2].integer("/error/code") == -32600);
}

TEST_CASE("handshake: a signal while the server waits for its first line ends it cleanly") {
  TempDir home;
  MockLlm mock;
  for (const auto& options : {std::vector<std::string>{}, kLeftToEngine}) {
    CAPTURE(options.size());
    auto p = start_server(home, mock, "mcp-server", options);
    // Until its main thread reads stdin, a signal finds the default action (or blocked but unwatched).
    REQUIRE(wait_until_reading_stdin(p->pid(), 20s));
    p->kill(SIGTERM);
    auto status = p->wait(5s);
    INFO(status.describe());
    CHECK(status.ok());
  }
}

TEST_CASE("handshake: the binary waits for initialize without CAF, which it loads after answering") {
  TempDir home;
  MockLlm mock;
  for (const std::string subcommand : {"mcp-server", "app-server", "acp"}) {
    CAPTURE(subcommand);
    auto p = start_server(home, mock, subcommand);
    REQUIRE(wait_until_reading_stdin(p->pid(), 20s));
    CHECK_FALSE(maps_caf(p->pid()));
    p->close_stdin();
    CHECK(p->wait(10s).ok());
  }
  // Left to the engine, the first line is read with CAF loaded (the test above can fail).
  auto p = start_server(home, mock, "mcp-server", kLeftToEngine);
  REQUIRE(wait_until_reading_stdin(p->pid(), 20s));
  CHECK(maps_caf(p->pid()));
  p->close_stdin();
  CHECK(p->wait(10s).ok());
}

TEST_CASE("handshake: a command line or config.toml the engine refuses gets no answer, only its error") {
  TempDir home;
  MockLlm mock;
  auto bogus = start_server(home, mock, "mcp-server", {"--bogus"});
  bogus->write_stdin(init_line(1) + "\n");
  CHECK(bogus->read_all_stdout(10s).empty());
  CHECK(bogus->wait(10s).code == 2);
  home.write("config.toml", "approval_policy = 5\n");
  for (const auto& options : {std::vector<std::string>{}, kLeftToEngine}) {
    CAPTURE(options.size());
    auto broken = start_server(home, mock, "mcp-server", options);
    broken->write_stdin(init_line(1) + "\n");
    CHECK(broken->read_all_stdout(10s).empty());
    CHECK(broken->wait(10s).code == 1);
  }
}
