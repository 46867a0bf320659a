// `llmx app-server` through the real binary: the initialize gate, the v2 thread/turn methods
// with their P9 notifications and P10 ordering, the v1 conversation methods with listeners and
// approval requests, and the same v1 methods on the MCP server (P1).
#include <doctest/doctest.h>

#include <filesystem>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

using AppServer = AppServerFixture;

// newConversation in the scratch work folder, and its answer.
Message new_conversation(AppServer& s) {
  auto conv = s.c.wait_for_response(s.c.request("newConversation", R"({"cwd":")" + s.work.path() + R"("})"));
  INFO(conv.line());
  REQUIRE_FALSE(conv.is_error());
  return conv;
}

// addConversationListener on `id`, and its answer.
Message add_listener(AppServer& s, const std::string& id) {
  auto sub = s.c.wait_for_response(s.c.request("addConversationListener", R"({"conversationId":")" + id + R"("})"));
  INFO(sub.line());
  REQUIRE_FALSE(sub.is_error());
  return sub;
}

}  // namespace

TEST_CASE("app-server: requests wait for initialize, a second initialize is refused, no jsonrpc field") {
  AppServer s;
  auto early = s.c.wait_for_response(s.c.request("thread/list", "{}"));
  CHECK(early.integer("/error/code") == -32600);
  CHECK(early.str("/error/message") == "Not initialized");
  auto init = s.c.wait_for_response(s.c.request("initialize", R"({"clientInfo":{"name":"vsc","version":"9"}})"));
  REQUIRE_FALSE(init.is_error());
  CHECK(contains(init.str("/result/userAgent"), "(vsc; 9)"));
  CHECK_FALSE(init.has("/jsonrpc"));
  auto again = s.c.wait_for_response(s.c.request("initialize", R"({"clientInfo":{"name":"vsc","version":"9"}})"));
  CHECK(again.str("/error/message") == "Already initialized");
  auto unknown = s.c.wait_for_response(s.c.request("thread/explode", "{}"));
  CHECK(unknown.integer("/error/code") == -32601);
  auto bad = s.c.wait_for_response(s.c.request("initialize2", "{}"));
  CHECK(bad.integer("/error/code") == -32601);
  auto ua = s.c.wait_for_response(s.c.request("getUserAgent"));
  if (!ua.is_error()) CHECK(ua.str("/result/userAgent") == init.str("/result/userAgent"));
}

TEST_CASE("app-server v2: thread/start then turn/start stream P9 notifications after the replies (P10)") {
  AppServer s;
  s.initialize();
  auto start_id = s.c.request("thread/start", "{}");
  auto started = s.c.wait_for([](const Message& m) { return is_method(m, "thread/started"); }, "thread/started");
  auto reply = s.c.wait_for_response(start_id);
  CHECK(reply.index() < started.index());
  auto thread = reply.str("/result/thread/id");
  CHECK(started.str("/params/thread/id") == thread);
  CHECK(reply.str("/result/thread/preview") == "");

  auto turn_req = s.c.request("turn/start", R"({"threadId":")" + thread +
                                                R"(","input":[{"type":"text","text":"hello @mock:text deltas=3"}]})");
  auto completed = s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  auto turn_reply = s.c.wait_for_response(turn_req);
  INFO(turn_reply.line());
  REQUIRE_FALSE(turn_reply.is_error());
  auto turn_id = turn_reply.str("/result/turn/id");
  CHECK(turn_reply.str("/result/turn/status") == "inProgress");
  CHECK(turn_reply.str("/result/turn/items/0/type") == "userMessage");
  CHECK(turn_reply.str("/result/turn/items/0/content/0/text") == "hello @mock:text deltas=3");
  CHECK(completed.str("/params/turn/id") == turn_id);
  CHECK(completed.str("/params/turn/status") == "completed");
  CHECK(completed.at("/params/turn/error").is_null());
  std::string deltas;
  size_t first_item = SIZE_MAX, started_index = SIZE_MAX, agent_completed = 0, task_complete = 0;
  for (const auto& m : s.c.log()) {
    if (is_method(m, "turn/started")) started_index = m.index();
    if (is_method(m, "item/agentMessage/delta")) deltas += m.str("/params/delta");
    if (m.method().starts_with("item/")) first_item = std::min(first_item, m.index());
    if (is_method(m, "item/completed") && m.str("/params/item/type") == "agentMessage") {
      ++agent_completed;
      CHECK(m.str("/params/item/text") == kMockAnswer);
    }
    if (is_method(m, "llmx/event/task_complete")) {
      ++task_complete;
      CHECK(m.str("/params/conversationId") == thread);
    }
  }
  CHECK(deltas == kMockAnswer);
  CHECK(agent_completed == 1);
  CHECK(task_complete == 1);  // thread/start attached the v1 event stream too
  CHECK(turn_reply.index() < started_index);
  CHECK(turn_reply.index() < first_item);
}

TEST_CASE("app-server v2: a command turn reports commandExecution items and output deltas") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread(R"({"approvalPolicy":"never","sandbox":"dangerFullAccess","cwd":")" + s.work.path() +
                               R"("})");
  s.c.request("turn/start", R"({"threadId":")" + thread +
                                R"(","input":[{"type":"text","text":"@mock:shell cmd=echo v2-out"}]})");
  auto done = s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  CHECK(done.str("/params/turn/status") == "completed");
  bool began = false, ended = false;
  std::string out;
  for (const auto& m : s.c.log()) {
    if (is_method(m, "item/started") && m.str("/params/item/type") == "commandExecution") {
      began = true;
      CHECK(m.str("/params/item/status") == "inProgress");
      CHECK(contains(m.str("/params/item/command"), "echo v2-out"));
    }
    if (is_method(m, "item/commandExecution/outputDelta")) out += m.str("/params/delta");
    if (is_method(m, "item/completed") && m.str("/params/item/type") == "commandExecution") {
      ended = true;
      CHECK(m.integer("/params/item/exit_code") == 0);
      CHECK(m.str("/params/item/status") == "completed");
      CHECK(contains(m.str("/params/item/aggregated_output"), "v2-out"));
    }
  }
  CHECK(began);
  CHECK(ended);
  CHECK(contains(out, "v2-out"));
}

TEST_CASE("app-server v2: turn/interrupt answers once the turn is aborted, turn/completed says interrupted") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  s.c.request("turn/start", R"({"threadId":")" + thread + R"(","input":[{"type":"text","text":"@mock:hang"}]})");
  s.c.wait_for([](const Message& m) { return is_method(m, "llmx/event/task_started"); }, "task_started");
  auto rid = s.c.request("turn/interrupt", R"({"threadId":")" + thread + R"(","turnId":"x"})");
  auto r = s.c.wait_for_response(rid);
  CHECK(r.text("/result") == "{}");
  auto done = s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  CHECK(done.str("/params/turn/status") == "interrupted");
  // Nothing running: a clear error instead of a reply that never comes.
  auto idle = s.c.wait_for_response(s.c.request("turn/interrupt", R"({"threadId":")" + thread + R"(","turnId":"x"})"));
  CHECK(idle.integer("/error/code") == -32600);
  auto bad = s.c.wait_for_response(s.c.request("turn/start", R"({"threadId":"nope","input":[]})"));
  CHECK(contains(bad.str("/error/message"), "invalid thread id"));
}

TEST_CASE("app-server v2: thread/list, thread/resume, thread/compact and thread/archive") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  s.c.request("turn/start", R"({"threadId":")" + thread + R"(","input":[{"type":"text","text":"remember OTTER @mock:text deltas=1"}]})");
  s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  auto list = s.c.wait_for_response(s.c.request("thread/list", R"({"limit":10})"));
  INFO(list.line());
  REQUIRE(list.at("/result/data").get_array().value_unsafe().size() == 1);
  CHECK(list.str("/result/data/0/id") == thread);
  CHECK(list.str("/result/data/0/preview") == "remember OTTER @mock:text deltas=1");
  CHECK(list.integer("/result/data/0/createdAt") > 1700000000);

  auto compact = s.c.wait_for_response(s.c.request("thread/compact", R"({"threadId":")" + thread + R"("})"));
  CHECK(compact.text("/result") == "{}");
  auto compacted = s.c.wait_for(
      [](const Message& m) {
        return is_method(m, "llmx/event/agent_message") && m.str("/params/msg/message") == "Compact task completed";
      },
      "compaction");
  CHECK(compacted.str("/params/conversationId") == thread);

  auto resumed = s.c.wait_for_response(s.c.request("thread/resume", R"({"threadId":")" + thread + R"("})"));
  INFO(resumed.line());
  CHECK(resumed.str("/result/thread/id") == thread);
  CHECK(resumed.str("/result/thread/preview") == "remember OTTER @mock:text deltas=1");

  auto archived = s.c.wait_for_response(s.c.request("thread/archive", R"({"threadId":")" + thread + R"("})"));
  CHECK(archived.text("/result") == "{}");
  auto empty = s.c.wait_for_response(s.c.request("thread/list", R"({})"));
  CHECK(empty.at("/result/data").get_array().value_unsafe().size() == 0);
  auto models = s.c.wait_for_response(s.c.request("model/list", R"({"limit":1})"));
  CHECK(models.has("/result/data/0/id"));  // the app server answers `data` (P8)
}

TEST_CASE("app-server v1: newConversation, listener stream, execCommandApproval, interruptConversation") {
  AppServer s;
  s.initialize();
  auto conv = s.c.wait_for_response(s.c.request(
      "newConversation", R"({"approvalPolicy":"untrusted","sandbox":"danger-full-access","cwd":")" + s.work.path() + R"("})"));
  INFO(conv.line());
  REQUIRE_FALSE(conv.is_error());
  auto id = conv.str("/result/conversationId");
  CHECK(contains(conv.str("/result/rolloutPath"), id));
  auto sub = s.c.wait_for_response(s.c.request("addConversationListener", R"({"conversationId":")" + id + R"("})"));
  REQUIRE_FALSE(sub.is_error());
  auto send = s.c.wait_for_response(s.c.request(
      "sendUserMessage",
      R"({"conversationId":")" + id + R"(","items":[{"type":"text","data":{"text":"@mock:shell cmd=touch approved.txt"}}]})"));
  CHECK(send.text("/result") == "{}");
  auto ask = s.c.wait_for([](const Message& m) { return is_method(m, "execCommandApproval"); }, "execCommandApproval");
  CHECK(ask.str("/params/conversationId") == id);
  CHECK(contains(ask.text("/params/command"), "approved.txt"));
  s.c.respond(ask.id(), R"({"decision":"approved"})");
  auto done = s.c.wait_for([](const Message& m) { return is_method(m, "llmx/event/task_complete"); }, "task_complete");
  CHECK(done.str("/params/conversationId") == id);
  CHECK(std::filesystem::exists(s.work.file("approved.txt")));

  // Seed-style flat input items are accepted too (P8); then interrupt a hanging turn.
  s.c.request("sendUserMessage", R"({"conversationId":")" + id + R"(","items":[{"type":"text","text":"@mock:hang"}]})");
  s.c.wait_for(
      [&](const Message& m) { return is_method(m, "llmx/event/task_started") && m.index() > done.index(); },
      "second task_started");
  auto intr = s.c.wait_for_response(s.c.request("interruptConversation", R"({"conversationId":")" + id + R"("})"));
  CHECK(intr.str("/result/abortReason") == "interrupted");

  auto removed = s.c.wait_for_response(
      s.c.request("removeConversationListener", R"({"subscriptionId":")" + sub.str("/result/subscriptionId") + R"("})"));
  CHECK(removed.text("/result") == "{}");
  auto again = s.c.wait_for_response(
      s.c.request("removeConversationListener", R"({"subscriptionId":")" + sub.str("/result/subscriptionId") + R"("})"));
  CHECK(again.integer("/error/code") == -32600);
  auto missing = s.c.wait_for_response(
      s.c.request("sendUserMessage", R"({"conversationId":"0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c","items":[{"type":"text","data":{"text":"x"}}]})"));
  CHECK(contains(missing.str("/error/message"), "conversation not found"));
  auto typo = s.c.wait_for_response(s.c.request("sendUserMessage", R"({"conversationId":5})"));
  CHECK(typo.integer("/error/code") == -32602);
}

TEST_CASE("app-server v1: two listeners on one conversation get every event twice, the same bytes in order") {
  AppServer s;
  s.initialize();
  auto id = new_conversation(s).str("/result/conversationId");
  add_listener(s, id);
  add_listener(s, id);
  s.c.request("sendUserMessage",
              R"({"conversationId":")" + id + R"(","items":[{"type":"text","data":{"text":"@mock:text deltas=3"}}]})");
  auto events = s.c.collect_until(
      [](const Message& m) { return is_method(m, "llmx/event/task_complete"); }, "first task_complete");
  const auto first = events.back().index();
  events.push_back(s.c.wait_for(
      [&](const Message& m) { return is_method(m, "llmx/event/task_complete") && m.index() > first; },
      "second task_complete"));
  std::vector<std::string> deltas;
  for (const auto& m : events)
    if (is_method(m, "llmx/event/agent_message_delta")) deltas.push_back(m.line());
  // Each line is written once and copied for the second listener, right after it.
  REQUIRE(deltas.size() == 6);
  for (size_t i = 0; i < deltas.size(); i += 2) CHECK(deltas[i] == deltas[i + 1]);
  CHECK(deltas[0] != deltas[2]);
  CHECK(contains(deltas[0], R"("conversationId":")" + id));
}

TEST_CASE("mcp-server serves the v1 conversation methods too (P1), with jsonrpc on every line") {
  InitializedMcp f;
  auto conv = f.mcp.wait_for_response(f.mcp.request("newConversation", "{}"));
  INFO(conv.line());
  REQUIRE_FALSE(conv.is_error());
  CHECK(conv.str("/jsonrpc") == "2.0");
  auto id = conv.str("/result/conversationId");
  f.mcp.wait_for_response(f.mcp.request("addConversationListener", R"({"conversationId":")" + id + R"("})"));
  f.mcp.request("sendUserTurn", R"({"conversationId":")" + id +
                                    R"(","items":[{"type":"text","data":{"text":"@mock:text deltas=2"}}],"cwd":"/tmp",)"
                                    R"("approvalPolicy":"never","sandboxPolicy":{"mode":"read-only"},"model":"m1","effort":null,"summary":"auto"})");
  auto done = f.mcp.wait_for([](const Message& m) { return m.method() == "llmx/event/task_complete"; }, "task_complete");
  CHECK(done.str("/jsonrpc") == "2.0");
  CHECK(contains(f.mock.requests_json(), R"("model":"m1")"));
}

TEST_CASE("app-server: a request to an archived conversation gets a clear error, never {}") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  auto archived = s.c.wait_for_response(s.c.request("thread/archive", R"({"threadId":")" + thread + R"("})"));
  REQUIRE(archived.text("/result") == "{}");
  auto expected = "conversation " + thread + " was archived";
  auto turn = s.c.wait_for_response(
      s.c.request("turn/start", R"({"threadId":")" + thread + R"(","input":[{"type":"text","text":"hi"}]})"));
  INFO(turn.line());
  REQUIRE(turn.is_error());
  CHECK(turn.integer("/error/code") == -32600);
  CHECK(turn.str("/error/message") == expected);
  for (const char* method : {"sendUserMessage", "interruptConversation", "addConversationListener"}) {
    std::string params = std::string(R"({"conversationId":")") + thread + R"(")" +
                         (std::string(method) == "sendUserMessage" ? R"(,"items":[{"type":"text","data":{"text":"x"}}]})"
                                                                   : "}");
    auto r = s.c.wait_for_response(s.c.request(method, params));
    INFO(method << ": " << r.line());
    REQUIRE(r.is_error());
    CHECK(r.str("/error/message") == expected);
  }
  // Unarchived and resumed, it is a live conversation again.
  auto back = s.c.wait_for_response(s.c.request("unarchiveConversation", R"({"conversationId":")" + thread + R"("})"));
  REQUIRE_FALSE(back.is_error());
  auto resumed = s.c.wait_for_response(s.c.request("thread/resume", R"({"threadId":")" + thread + R"("})"));
  REQUIRE_FALSE(resumed.is_error());
  auto again = s.c.wait_for_response(
      s.c.request("turn/start", R"({"threadId":")" + thread + R"(","input":[{"type":"text","text":"hi"}]})"));
  INFO(again.line());
  CHECK_FALSE(again.is_error());
  s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
}

TEST_CASE("app-server v1: sendUserMessage to a conversation archived with archiveConversation is an error") {
  AppServer s;
  s.initialize();
  auto conv = new_conversation(s);
  auto id = conv.str("/result/conversationId");
  auto listener = add_listener(s, id);
  auto archived = s.c.wait_for_response(s.c.request(
      "archiveConversation", R"({"conversationId":")" + id + R"(","rolloutPath":")" + conv.str("/result/rolloutPath") + R"("})"));
  INFO(archived.line());
  REQUIRE_FALSE(archived.is_error());
  auto sent = s.c.wait_for_response(
      s.c.request("sendUserMessage", R"({"conversationId":")" + id + R"(","items":[{"type":"text","data":{"text":"x"}}]})"));
  INFO(sent.line());
  REQUIRE(sent.is_error());
  CHECK(sent.str("/error/message") == "conversation " + id + " was archived");
  // Its listener went with it.
  auto removed = s.c.wait_for_response(s.c.request(
      "removeConversationListener", R"({"subscriptionId":")" + listener.str("/result/subscriptionId") + R"("})"));
  CHECK(removed.is_error());
}
