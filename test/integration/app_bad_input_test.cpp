// Bad input to the app server (issue 5): every method with mistyped params gets exactly one
// -32602 naming the problem; ids of every JSON shape are echoed as sent; duplicate ids each get
// their reply; replies to requests we never sent change nothing.
#include <doctest/doctest.h>

#include "test/support/harness.hpp"

using namespace llmx::test;

namespace {
const std::vector<std::string> kMethods = {
    "newConversation", "getConversationSummary", "listConversations", "resumeConversation",
    "archiveConversation", "sendUserMessage", "sendUserTurn", "interruptConversation",
    "addConversationListener", "removeConversationListener", "gitDiffToRemote", "execOneOffCommand",
    "fuzzyFileSearch", "getUserSavedConfig", "setDefaultModel", "getUserAgent", "userInfo", "loginApiKey",
    "loginChatGpt", "cancelLoginChatGpt", "logoutChatGpt", "getAuthStatus", "thread/start", "thread/resume",
    "thread/list", "thread/archive", "thread/compact", "turn/start", "turn/interrupt", "model/list",
    "account/read", "account/login/start", "account/login/cancel", "account/logout", "account/rateLimits/read",
    "feedback/upload"};

}  // namespace

TEST_CASE("app-server bad input: every method with mistyped params gets exactly one -32602") {
  TempDir home{"llmx-app-bad"};
  MockLlm mock;
  McpClient c(home.path(), mock.url(), app_server_options());
  REQUIRE_FALSE(c.wait_for_response(c.request("initialize", R"({"clientInfo":{"name":"t","version":"1"}})")).is_error());
  std::vector<std::pair<std::string, std::string>> sent;
  for (const auto& m : kMethods) sent.emplace_back(m, c.request(m, "[1,2,3]"));
  auto ping = c.request("getUserAgent");  // still alive and in order afterwards
  c.wait_for_response(ping);
  for (const auto& [method, id] : sent) {
    const auto& shown_method = method;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_method);
    auto replies = c.responses_for(id);
    REQUIRE(replies.size() == 1);
    CHECK(replies[0].integer("/error/code") == -32602);
    CHECK(contains(replies[0].str("/error/message"), "Invalid params"));
  }
  // Missing required fields name the field.
  auto missing = c.wait_for_response(c.request("turn/start", R"({"input":[]})"));
  CHECK(missing.integer("/error/code") == -32602);
  CHECK(contains(missing.str("/error/message"), "threadId"));
  auto wrong = c.wait_for_response(c.request("thread/start", R"({"approvalPolicy":"on-request"})"));
  CHECK(wrong.integer("/error/code") == -32602);  // a v1 spelling on a v2 method (§4.3)
  CHECK(contains(wrong.str("/error/message"), "approvalPolicy"));
}

TEST_CASE("app-server bad input: ids of every shape, duplicates, and replies nobody asked for") {
  TempDir home{"llmx-app-ids"};
  MockLlm mock;
  McpClient c(home.path(), mock.url(), app_server_options());
  c.request_with_id(R"("init-1")", "initialize", R"({"clientInfo":{"name":"t","version":"1"}})");
  auto init = c.wait_for_response(R"("init-1")");
  CHECK(init.text("/id") == R"("init-1")");
  c.request_with_id("9007199254740993", "getUserAgent");
  CHECK(c.wait_for_response("9007199254740993").text("/id") == "9007199254740993");
  c.request_with_id("-5", "getUserAgent");
  CHECK_FALSE(c.wait_for_response("-5").is_error());
  c.request_with_id("7", "getUserAgent");
  c.request_with_id("7", "model/list", "{}");
  c.send_line(R"({"id":4242,"result":{"decision":"approved"}})");   // never asked
  c.send_line(R"({"id":4243,"error":{"code":1,"message":"x"}})");  // never asked either
  c.send_line("{not json");
  auto after = c.wait_for_response(c.request("getUserAgent"));
  CHECK_FALSE(after.is_error());
  // model/list answers once the provider's model list came (it asks the model registry).
  c.wait_for([](const Message& m) { return m.is_response() && m.text("/id") == "7" && m.has("/result/data"); },
             "model/list's answer");
  CHECK(c.responses_for("7").size() == 2);
  size_t parse_errors = 0;
  for (const auto& m : c.log())
    if (m.is_error() && m.integer("/error/code") == -32700) ++parse_errors;
  CHECK(parse_errors == 1);
}

TEST_CASE("app-server bad input: a turn without input is refused instead of started and never finished") {
  TempDir home{"llmx-app-empty"};
  MockLlm mock;
  McpClient c(home.path(), mock.url(), app_server_options());
  REQUIRE_FALSE(c.wait_for_response(c.request("initialize", R"({"clientInfo":{"name":"t","version":"1"}})")).is_error());
  auto started = c.wait_for_response(c.request("thread/start", "{}"));
  REQUIRE_FALSE(started.is_error());
  auto thread = started.str("/result/thread/id");
  auto empty = c.wait_for_response(c.request("turn/start", R"({"threadId":")" + thread + R"(","input":[]})"));
  CHECK(empty.integer("/error/code") == -32602);
  CHECK(contains(empty.str("/error/message"), "input"));
  // v1: sendUserMessage and sendUserTurn answer {} and then stream a turn; with no items, no turn.
  auto conv = c.wait_for_response(c.request("newConversation", "{}"));
  REQUIRE_FALSE(conv.is_error());
  auto conv_id = conv.str("/result/conversationId");
  auto v1 = c.wait_for_response(c.request("sendUserMessage", R"({"conversationId":")" + conv_id + R"(","items":[]})"));
  CHECK(v1.integer("/error/code") == -32602);
  CHECK(contains(v1.str("/error/message"), "items"));
  auto turn = c.wait_for_response(c.request(
      "sendUserTurn", R"({"conversationId":")" + conv_id +
                          R"(","items":[],"cwd":"/tmp","approvalPolicy":"never","sandboxPolicy":{"mode":"read-only"},"model":"mock-model","summary":"auto"})"));
  CHECK(turn.integer("/error/code") == -32602);
  // Nothing started: no turn notification, and the model was never asked.
  c.drain(std::chrono::milliseconds(200));
  for (const auto& m : c.log()) CHECK(m.method() != "turn/started");
  CHECK(array_size(Message(mock.requests_json()), "/requests") == 0);
}
