// The app server's notifications and server requests that only some flows produce, through the
// real binary: authStatusChange (v1 auth methods), account/login/completed and account/updated
// (v2 account methods), applyPatchApproval through a v1 listener, and the provider's rate-limit
// headers as account/rateLimits/updated (both servers) and account/rateLimits/read.
#include <doctest/doctest.h>

#include <filesystem>

#include "test/support/harness.hpp"

using namespace llmx::test;

namespace {


// The first notification `method` after message index `after`.
Message next_notification(McpClient& c, std::string_view method, size_t after) {
  return c.wait_for([&](const Message& m) { return m.is_notification() && m.method() == method && m.index() > after; },
                    method);
}

size_t count_method(const McpClient& c, std::string_view method) {
  size_t n = 0;
  for (const auto& m : c.log()) n += m.method() == method;
  return n;
}

}  // namespace

TEST_CASE("app-server v1 auth: loginApiKey and logoutChatGpt each send authStatusChange") {
  AppServerFixture s;
  s.initialize();
  auto login = s.call("loginApiKey", R"({"apiKey":"sk-app-test"})");
  INFO(login.line());
  CHECK(login.text("/result") == "{}");
  auto changed = next_notification(s.c, "authStatusChange", login.index());
  CHECK(changed.text("/params") == R"({"authMethod":"apikey"})");
  CHECK_FALSE(changed.has("/jsonrpc"));
  CHECK(contains(read_file(s.home.file("auth.json")), "sk-app-test"));

  auto logout = s.call("logoutChatGpt");
  CHECK(logout.text("/result") == "{}");
  // The environment's LLMX_API_KEY still authenticates after the stored key is gone.
  auto after = next_notification(s.c, "authStatusChange", logout.index());
  CHECK(after.text("/params") == R"({"authMethod":"apikey"})");
  CHECK_FALSE(std::filesystem::exists(s.home.file("auth.json")));
  CHECK(count_method(s.c, "account/updated") == 0);  // v1 methods speak v1 only
}

TEST_CASE("app-server v1 auth: without any key, logout reports no auth method") {
  McpOptions o;
  o.env = {{"LLMX_API_KEY", ""}};
  AppServerFixture s(o);
  s.initialize();
  s.call("loginApiKey", R"({"apiKey":"sk-only-stored"})");
  auto logout = s.call("logoutChatGpt");
  auto after = next_notification(s.c, "authStatusChange", logout.index());
  CHECK(after.text("/params") == R"({"authMethod":null})");
}

TEST_CASE("app-server v2 account: login/start sends login/completed then account/updated, logout sends updated") {
  McpOptions o;
  o.env = {{"LLMX_API_KEY", ""}};
  AppServerFixture s(o);
  s.initialize();
  auto before = s.call("account/read", "{}");
  CHECK(before.text("/result/account") == "null");
  auto login = s.call("account/login/start", R"({"type":"apiKey","apiKey":"sk-v2"})");
  INFO(login.line());
  CHECK(login.text("/result") == R"({"type":"apiKey"})");
  auto completed = next_notification(s.c, "account/login/completed", login.index());
  CHECK(completed.text("/params") == R"({"loginId":null,"success":true,"error":null})");
  auto updated = next_notification(s.c, "account/updated", completed.index());
  CHECK(updated.text("/params") == R"({"authMode":"apikey"})");
  CHECK(s.call("account/read", "{}").text("/result/account") == R"({"type":"apiKey"})");

  auto logout = s.call("account/logout");
  CHECK(logout.text("/result") == "{}");
  auto cleared = next_notification(s.c, "account/updated", logout.index());
  CHECK(cleared.text("/params") == R"({"authMode":null})");
  CHECK(count_method(s.c, "authStatusChange") == 0);  // v2 methods speak v2 only
}

TEST_CASE("app-server v1: applyPatchApproval through a listener, denied leaves the tree, approved writes") {
  AppServerFixture s;
  s.initialize();
  auto conv = s.call("newConversation", R"({"approvalPolicy":"untrusted","sandbox":"workspace-write","cwd":")" +
                                            s.work.path() + R"("})");
  INFO(conv.line());
  REQUIRE_FALSE(conv.is_error());
  auto id = conv.str("/result/conversationId");
  REQUIRE_FALSE(s.call("addConversationListener", R"({"conversationId":")" + id + R"("})").is_error());

  auto turn = [&](const std::string& file, const std::string& decision) {
    auto sent = s.call("sendUserMessage", R"({"conversationId":")" + id +
                                              R"(","items":[{"type":"text","data":{"text":"@mock:apply_patch file=)" +
                                              file + R"("}}]})");
    auto ask = s.c.wait_for(
        [&](const Message& m) { return is_method(m, "applyPatchApproval") && m.index() > sent.index(); },
        "applyPatchApproval");
    INFO(ask.line());
    CHECK(ask.is_request());
    CHECK(ask.str("/params/conversationId") == id);
    CHECK_FALSE(ask.str("/params/callId").empty());
    std::string key;  // the path as a JSON pointer token ('/' is '~1')
    for (char ch : s.work.file(file)) key += ch == '/' ? std::string("~1") : std::string(1, ch);
    CHECK(ask.str("/params/fileChanges/" + key + "/add/content") == "hello from mock-llm\n");
    CHECK(ask.text("/params/reason") == "null");
    s.c.respond(ask.id(), R"({"decision":")" + decision + R"("})");
    auto done = s.c.wait_for(
        [&](const Message& m) { return is_method(m, "llmx/event/task_complete") && m.index() > ask.index(); },
        "task_complete");
    return done;
  };
  turn("denied.txt", "denied");
  CHECK_FALSE(std::filesystem::exists(s.work.file("denied.txt")));
  auto end = turn("approved.txt", "approved");
  CHECK(std::filesystem::exists(s.work.file("approved.txt")));
  CHECK(end.str("/params/conversationId") == id);
  // Both patch_apply events of the approved call went to the listener.
  CHECK(count_method(s.c, "llmx/event/patch_apply_end") == 1);
}

TEST_CASE("app-server: the provider's rate-limit headers become account/rateLimits/updated and /read") {
  AppServerFixture s;
  s.initialize();
  auto none = s.call("account/rateLimits/read");
  CHECK(none.integer("/error/code") == -32600);
  auto thread = s.start_thread();
  auto turn = s.call("turn/start", R"({"threadId":")" + thread +
                                       R"(","input":[{"type":"text","text":"@mock:text ratelimit=openai ratelimit_remaining=60"}]})");
  REQUIRE_FALSE(turn.is_error());
  auto updated = next_notification(s.c, "account/rateLimits/updated", turn.index());
  INFO(updated.line());
  CHECK(updated.integer("/params/rateLimits/primary/usedPercent") == 40);
  CHECK(updated.text("/params/rateLimits/primary/windowDurationMins") == "null");
  CHECK(updated.integer("/params/rateLimits/primary/resetsAt") > 0);
  CHECK(updated.integer("/params/rateLimits/secondary/usedPercent") == 40);
  // The same numbers ride on the token_count events of the turn.
  auto tc = s.c.wait_for(
      [](const Message& m) { return is_method(m, "llmx/event/token_count") && m.text("/params/msg/rate_limits") != "null"; },
      "token_count with rate_limits");
  CHECK(tc.text("/params/msg/rate_limits/primary/used_percent") == "40.0");
  s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  // Announced once per change: the usage token_count carries the same limits and adds nothing.
  CHECK(count_method(s.c, "account/rateLimits/updated") == 1);
  auto read = s.call("account/rateLimits/read");
  CHECK(read.text("/result") == updated.text("/params"));

  // Anthropic's headers behind LiteLLM's prefix change the numbers: a second notification.
  auto second = s.call("turn/start", R"({"threadId":")" + thread +
                                         R"(","input":[{"type":"text","text":"@mock:text ratelimit=litellm-anthropic ratelimit_remaining=10"}]})");
  auto again = next_notification(s.c, "account/rateLimits/updated", second.index());
  CHECK(again.integer("/params/rateLimits/primary/usedPercent") == 90);
  CHECK(again.integer("/params/rateLimits/primary/resetsAt") == 1893456000);  // 2030-01-01T00:00:00Z
}

TEST_CASE("mcp-server: rate-limit headers of a tool call's turn reach account/rateLimits/updated and /read") {
  InitializedMcp f;
  auto id = f.mcp.call_llmx("@mock:text ratelimit=llmx ratelimit_remaining=25");
  auto result = f.mcp.wait_for_response(id);
  REQUIRE_FALSE(result_is_error(result));
  auto updated = f.mcp.wait_for([](const Message& m) { return is_method(m, "account/rateLimits/updated"); },
                                "account/rateLimits/updated");
  CHECK(updated.str("/jsonrpc") == "2.0");
  CHECK(updated.integer("/params/rateLimits/primary/usedPercent") == 75);
  CHECK(updated.integer("/params/rateLimits/primary/windowDurationMins") == 300);
  CHECK(updated.text("/params/rateLimits/secondary") == "null");
  auto read = f.mcp.wait_for_response(f.mcp.request("account/rateLimits/read"));
  CHECK(read.text("/result") == updated.text("/params"));
}

TEST_CASE("app-server: a 429 with rate-limit headers reports the exhausted window before the retry succeeds") {
  AppServerFixture s;
  s.initialize();
  auto thread = s.start_thread();
  auto turn = s.call("turn/start", R"({"threadId":")" + thread +
                                       R"(","input":[{"type":"text","text":"@mock:error429 times=1 ratelimit=openai"}]})");
  auto exhausted = next_notification(s.c, "account/rateLimits/updated", turn.index());
  CHECK(exhausted.integer("/params/rateLimits/primary/usedPercent") == 100);
  auto done = s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  CHECK(done.str("/params/turn/status") == "completed");
}
