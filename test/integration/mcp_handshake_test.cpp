// The stdio MCP server answers `initialize` before its actors start (issue 18, point 5): the
// answer is the session's own, what follows it in the same write is served in order, and a
// signal while the server waits for that first line ends it.
#include <doctest/doctest.h>

#include <csignal>
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

std::unique_ptr<ChildProcess> start_server(const TempDir& home, const MockLlm& mock) {
  SpawnOptions o;
  o.argv = {LLMX_BIN, "mcp-server"};
  o.env = llmx_env(home.path(), mock.url());
  o.cwd = home.path();
  return std::make_unique<ChildProcess>(std::move(o));
}

}  // namespace

TEST_CASE("mcp handshake: initialize answered before the engine starts is the session's own answer") {
  TempDir home;
  MockLlm mock;
  auto early = start_server(home, mock);
  REQUIRE(early->write_stdin(init_line(1) + "\n"));
  auto early_reply = early->read_line();
  // A blank first line leaves initialize to the session, as every line after the first.
  auto late = start_server(home, mock);
  REQUIRE(late->write_stdin("\n" + init_line(1) + "\n"));
  auto late_reply = late->read_line();
  REQUIRE(early_reply);
  REQUIRE(late_reply);
  CHECK(*early_reply == *late_reply);
  Message m(*early_reply);
  CHECK(m.str("/result/protocolVersion") == "2025-11-25");
  CHECK(m.has("/result/capabilities/tasks"));
}

TEST_CASE("mcp handshake: what comes behind initialize in the same write is served, in order") {
  TempDir home;
  MockLlm mock;
  auto p = start_server(home, mock);
  REQUIRE(p->write_stdin(init_line(1) + "\n" + R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n" +
                         R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})" + "\n" +
                         R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
                         R"("capabilities":{},"clientInfo":{"name":"again","version":"1"}}})" "\n" +
                         R"({"jsonrpc":"2.0","id":4,"method":"ping"})" + "\n"));
  std::vector<Message> replies;
  while (replies.size() < 4) {
    auto line = p->read_line();
    REQUIRE(line);
    replies.emplace_back(*line);
  }
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

TEST_CASE("mcp handshake: a signal while the server waits for its first line ends it cleanly") {
  TempDir home;
  MockLlm mock;
  auto p = start_server(home, mock);
  std::this_thread::sleep_for(300ms);  // long enough to be waiting in read()
  p->kill(SIGTERM);
  auto status = p->wait(5s);
  INFO(status.describe());
  CHECK(status.ok());
}
