// Many clients' worth of work in one process (issue 5): 200 conversations at once through one
// app-server and through one mcp-server; every event reaches its own conversation, in order,
// none lost; and an exit with many idle ones waits only for those that ran a turn (issue 18).
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {
constexpr int kConversations = 200;
}  // namespace

TEST_CASE("200 conversations at once through one app-server: every delta in its own thread, in order") {
  TempDir home{"llmx-many-app"};
  MockLlm mock({"--max-threads", "512"});
  McpClient c(home.path(), mock.url(), app_server_options());
  REQUIRE_FALSE(c.wait_for_response(c.request("initialize", R"({"clientInfo":{"name":"many","version":"1"}})")).is_error());
  std::vector<std::string> threads;
  for (int i = 0; i < kConversations; ++i) {
    auto r = c.wait_for_response(c.request("thread/start", "{}"));
    REQUIRE_FALSE(r.is_error());
    threads.push_back(r.str("/result/thread/id"));
  }
  for (const auto& t : threads)
    c.request("turn/start",
              R"({"threadId":")" + t + R"(","input":[{"type":"text","text":"go @mock:text deltas=12"}]})");
  size_t completed = 0;
  c.collect_until(
      [&](const Message& m) { return m.method() == "turn/completed" && ++completed == kConversations; },
      "200 turn/completed", std::chrono::milliseconds(120000));
  // Per thread: the v1 deltas (llmx/event) arrive in order and complete.
  std::map<std::string, std::string> text;
  std::map<std::string, int> deltas, done;
  for (const auto& m : c.log()) {
    if (m.method() == "llmx/event/agent_message_delta") {
      text[m.str("/params/conversationId")] += m.str("/params/msg/delta");
      ++deltas[m.str("/params/conversationId")];
    }
    if (m.method() == "llmx/event/task_complete") ++done[m.str("/params/conversationId")];
  }
  for (const auto& t : threads) {
    CAPTURE(t);
    CHECK(deltas[t] == 12);
    CHECK(text[t] == kMockAnswer);
    CHECK(done[t] == 1);
  }
}

TEST_CASE("200 conversations at once through one mcp-server: every tool call gets its own events, in order") {
  TempDir home{"llmx-many-mcp"};
  MockLlm mock({"--max-threads", "512"});
  McpClient c(home.path(), mock.url());
  c.initialize();
  std::vector<std::string> ids;
  for (int i = 0; i < kConversations; ++i) ids.push_back(c.call_llmx("go @mock:text deltas=12"));
  size_t answered = 0;
  std::set<std::string> want(ids.begin(), ids.end());
  c.collect_until(
      [&](const Message& m) { return m.is_response() && want.count(m.id()) && ++answered == kConversations; },
      "200 tool results", std::chrono::milliseconds(120000));
  for (const auto& id : ids) {
    CAPTURE(id);
    auto events = c.events_for(id);
    CHECK(joined_deltas(events) == kMockAnswer);
    CHECK(events_of_type(events, "agent_message_delta").size() == 12);
    REQUIRE(!events.empty());
    CHECK(events.back().event_type() == "task_complete");
    auto responses = c.responses_for(id);
    REQUIRE(responses.size() == 1);
    CHECK(result_text(responses[0]) == kMockAnswer);
  }
}

TEST_CASE("stdin closes with 1,500 idle conversations and one hanging turn: the abort reaches the client and the disk") {
  InitializedMcp f;
  auto conv = f.mcp.wait_for_response(f.mcp.request("newConversation", "{}"));
  const auto id = conv.str("/result/conversationId");
  REQUIRE(id.size() == 36);
  // More than one slice of idle conversations, made after the busy one (they end after the
  // shutdown's reply, a slice at a time).
  for (int i = 0; i < 1500; ++i) REQUIRE_FALSE(f.mcp.wait_for_response(f.mcp.request("newConversation", "{}")).is_error());
  // A v1 turn: the session does not hold it as a call, so only the engine's shutdown ends it,
  // and the exit must wait for that conversation while it need not wait for the idle ones.
  f.mcp.wait_for_response(f.mcp.request("addConversationListener", R"({"conversationId":")" + id + R"("})"));
  auto sent = f.mcp.wait_for_response(f.mcp.request(
      "sendUserMessage", R"({"conversationId":")" + id + R"(","items":[{"type":"text","text":"@mock:hang"}]})"));
  REQUIRE(sent.text("/result") == "{}");
  f.mcp.wait_for([](const Message& m) { return m.method() == "llmx/event/task_started"; }, "task_started");
  f.mcp.close_stdin();
  auto st = f.mcp.wait_exit(10s);
  INFO(f.mcp.diagnostics());
  CHECK(st.describe() == "exit code 0");
  // The abort reached the client before its output closed, and the disk.
  size_t aborted = 0;
  for (const auto& m : f.mcp.log())
    if (m.method() == "llmx/event/turn_aborted" && m.str("/params/conversationId") == id) ++aborted;
  CHECK(aborted == 1);
  auto files = rollout_files(f.home.file("sessions"));
  REQUIRE(files.size() == 1);  // the idle conversations made none
  CHECK(contains(read_file(files[0]), R"("turn_aborted")"));
}
