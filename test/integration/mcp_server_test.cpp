// `llmx mcp-server` end to end: the real binary over pipes, the real mock-llm over loopback.
// protocol.md §2 as amended by DECISIONS P2, P5, P6, P10.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {


// Checks one finished `llmx` tool call: the event stream of request `id` (its JSON text) and the
// response. Returns the conversation id.
std::string check_streamed_turn(McpClient& mcp, const std::string& id, const Message& resp,
                                std::string_view expected_text, size_t expected_deltas) {
  auto events = mcp.events_for(id);
  REQUIRE(events.size() >= 3);
  // session_configured first, with event id "" (P10: it precedes everything of the turn).
  CHECK(events.front().event_type() == "session_configured");
  CHECK(events.front().str("/params/id") == "");
  const std::string thread_id = events.front().str("/params/msg/session_id");
  CHECK(thread_id.size() == 36);

  // Every later event carries the submission id: the request id as a plain string.
  const std::string sub_id = id.front() == '"' ? id.substr(1, id.size() - 2) : id;
  for (size_t i = 1; i < events.size(); ++i) {
    CHECK_MESSAGE(events[i].str("/params/id") == sub_id, events[i].line());
    CHECK(events[i].event_type() != "session_configured");
    if (events[i].has("/params/msg/thread_id")) CHECK(events[i].str("/params/msg/thread_id") == thread_id);
  }
  CHECK(events[1].event_type() == "task_started");

  // The deltas arrive in order and add up to the answer.
  auto deltas = events_of_type(events, "agent_message_delta");
  CHECK(deltas.size() == expected_deltas);
  CHECK(joined_deltas(events) == expected_text);

  // task_complete ends the stream and is written before the response.
  CHECK(events.back().event_type() == "task_complete");
  CHECK(events.back().str("/params/msg/last_agent_message") == expected_text);
  CHECK(events.back().index() < resp.index());
  CHECK(events_of_type(events, "task_complete").size() == 1);

  // P5: text block plus structuredContent {threadId, content}; no isError.
  CHECK(resp.text("/jsonrpc") == "\"2.0\"");
  CHECK(resp.id() == id);
  CHECK_FALSE(resp.has("/error"));
  CHECK_FALSE(result_is_error(resp));
  CHECK(resp.str("/result/content/0/type") == "text");
  CHECK(result_text(resp) == expected_text);
  CHECK(resp.str("/result/structuredContent/threadId") == thread_id);
  CHECK(resp.str("/result/structuredContent/content") == expected_text);
  return thread_id;
}

// The chat requests the mock has seen, parsed.
Message mock_requests(MockLlm& mock) { return Message(mock.requests_json()); }

}  // namespace

// --- handshake ------------------------------------------------------------------------------------

namespace {

// llmx-reply to a conversation whose turn was just cancelled: refused ("already running") while
// the interrupted turn winds down, accepted within 3 s of the cancel.
Message reply_once_free(McpClient& mcp, const std::string& thread, std::chrono::steady_clock::time_point cancelled_at) {
  while (true) {
    auto resp = mcp.wait_for_response(mcp.call_reply(thread, "@mock:echo after cancel"));
    if (!result_is_error(resp)) return resp;
    INFO(result_text(resp));
    REQUIRE(result_text(resp).find("already running") != std::string::npos);
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() - cancelled_at < 3s,
                    "the cancelled turn is still running 3 s after notifications/cancelled");
    std::this_thread::sleep_for(50ms);
  }
}

}  // namespace

TEST_CASE("mcp: initialize echoes a supported protocol version and offers the latest otherwise") {
  TempDir home;
  MockLlm mock;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2025-06-18", "2025-06-18"}, {"2025-11-25", "2025-11-25"}, {"1999-01-01", "2025-11-25"}};
  for (const auto& [asked, answered] : cases) {
    const auto& shown_asked = asked;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_asked);
    McpClient mcp(home.path(), mock.url());
    auto resp = mcp.initialize(asked);
    CHECK(resp.text("/jsonrpc") == "\"2.0\"");
    CHECK(resp.id() == "1");
    CHECK(resp.str("/result/protocolVersion") == answered);
    CHECK(resp.str("/result/serverInfo/name") == "llmx-mcp-server");
    CHECK(resp.has("/result/serverInfo/version"));
    CHECK(resp.has("/result/capabilities/tools"));
    // The client's name and version end the user agent.
    CHECK(resp.str("/result/serverInfo/user_agent").find("(llmx-tests; 1.0)") != std::string::npos);
  }
}

TEST_CASE("mcp: a second initialize is rejected with -32600") {
  McpServerFixture f;
  f.mcp.initialize("2025-06-18");
  auto id = f.mcp.request("initialize", R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                                        R"("clientInfo":{"name":"again","version":"2"}})");
  auto resp = f.mcp.wait_for_response(id);
  REQUIRE(resp.is_error());
  CHECK(resp.integer("/error/code") == -32600);
  CHECK(resp.str("/error/message").find("initialize") != std::string::npos);
  // The session still works.
  CHECK(f.mcp.wait_for_response(f.mcp.request("ping")).text("/result") == "{}");
}

TEST_CASE("mcp: notifications/initialized gets no reply and ping answers {}") {
  McpServerFixture f;
  auto init = f.mcp.request("initialize", R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                                          R"("clientInfo":{"name":"t","version":"1"}})");
  f.mcp.notify("notifications/initialized");
  f.mcp.request_with_id("7", "ping");
  f.mcp.request_with_id(R"("ping-as-string")", "ping", "{}");
  // Replies come in order, and nothing answers the notification.
  auto first = f.mcp.next();
  auto second = f.mcp.next();
  auto third = f.mcp.next();
  REQUIRE(first);
  REQUIRE(second);
  REQUIRE(third);
  CHECK(first->id() == init);
  CHECK(second->is_response());
  CHECK(second->id() == "7");
  CHECK(second->text("/result") == "{}");
  CHECK(third->id() == R"("ping-as-string")");
  CHECK(third->text("/result") == "{}");
  f.mcp.drain(200ms);
  CHECK(f.mcp.log().size() == 3);
}

TEST_CASE("mcp: tools/list offers llmx and llmx-reply with input and output schemas") {
  InitializedMcp f;
  auto resp = f.mcp.wait_for_response(f.mcp.request("tools/list"));
  REQUIRE(array_size(resp, "/result/tools") == 2);
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < 2; ++i) by_name[resp.str("/result/tools/" + std::to_string(i) + "/name")] = i;
  REQUIRE(by_name.count("llmx") == 1);
  REQUIRE(by_name.count("llmx-reply") == 1);

  const std::string llmx = "/result/tools/" + std::to_string(by_name["llmx"]);
  CHECK(resp.str(llmx + "/title") == "LLMX");
  CHECK(resp.str(llmx + "/inputSchema/type") == "object");
  CHECK(resp.str(llmx + "/inputSchema/properties/prompt/type") == "string");
  CHECK(resp.has(llmx + "/inputSchema/properties/approval-policy/enum"));
  CHECK(resp.has(llmx + "/inputSchema/properties/sandbox/enum"));
  CHECK(resp.has(llmx + "/inputSchema/properties/config"));
  CHECK(resp.text(llmx + "/inputSchema/required") == R"(["prompt"])");
  CHECK(resp.str(llmx + "/outputSchema/type") == "object");
  CHECK(resp.has(llmx + "/outputSchema/properties/threadId"));
  CHECK(resp.has(llmx + "/outputSchema/properties/content"));

  const std::string reply = "/result/tools/" + std::to_string(by_name["llmx-reply"]);
  CHECK(resp.str(reply + "/inputSchema/type") == "object");
  CHECK(resp.has(reply + "/inputSchema/properties/conversationId"));
  CHECK(resp.has(reply + "/inputSchema/properties/prompt"));
  CHECK(resp.text(reply + "/inputSchema/required") == R"(["conversationId","prompt"])");
  CHECK(resp.has(reply + "/outputSchema/properties/threadId"));
  CHECK(resp.has(reply + "/outputSchema/properties/content"));

  // 2025-11-25: what a host may assume (an agent turn edits and runs things), and an icon.
  for (const auto& tool : {llmx, reply}) {
    CHECK(resp.text(tool + "/annotations/readOnlyHint") == "false");
    CHECK(resp.text(tool + "/annotations/destructiveHint") == "true");
    CHECK(resp.text(tool + "/annotations/idempotentHint") == "false");
    CHECK(resp.str(tool + "/icons/0/src").starts_with("data:image/svg+xml;base64,"));
  }
}

TEST_CASE("mcp: initialize gives instructions and an icon for the host") {
  McpServerFixture f;
  auto init = f.mcp.initialize("2025-11-25");
  CHECK(init.str("/result/instructions").find("llmx-reply") != std::string::npos);
  CHECK(init.str("/result/serverInfo/icons/0/mimeType") == "image/svg+xml");
  CHECK_FALSE(init.str("/result/serverInfo/description").empty());
}

// --- turns ----------------------------------------------------------------------------------------

TEST_CASE("mcp: a text turn streams llmx/event notifications for a numeric request id") {
  InitializedMcp f;
  auto id = f.mcp.call_llmx("@mock:text deltas=5");
  // Read in arrival order: only this call's notifications, then its response.
  auto msgs = f.mcp.collect_until([&](const Message& m) { return m.is_response(); }, "the tools/call response");
  const Message resp = msgs.back();
  CHECK(resp.id() == id);
  for (size_t i = 0; i + 1 < msgs.size(); ++i) {
    CHECK(msgs[i].is_notification());
    CHECK(msgs[i].method() == "llmx/event");
  }
  check_streamed_turn(f.mcp, id, resp, kMockAnswer, 5);
  // Every line is JSON-RPC 2.0 and every event belongs to this call.
  for (const auto& m : f.mcp.log()) {
    CHECK(m.text("/jsonrpc") == "\"2.0\"");
    if (m.is_event()) CHECK(m.event_request_id() == id);
  }
  CHECK(f.mcp.responses_for(id).size() == 1);
}

TEST_CASE("mcp: a text turn streams llmx/event notifications for a string request id") {
  InitializedMcp f;
  const std::string id = R"("call-abc")";
  f.mcp.request_with_id(id, "tools/call", llmx_call_params("@mock:text deltas=7"));
  auto resp = f.mcp.wait_for_response(id);
  check_streamed_turn(f.mcp, id, resp, kMockAnswer, 7);
  for (const auto& e : f.mcp.events_for(id)) CHECK(e.at("/params/_meta/requestId").is_string());
}

TEST_CASE("mcp: a long answer of 2000 deltas arrives complete and in order") {
  InitializedMcp f;
  auto id = f.mcp.call_llmx("@mock:long deltas=2000");
  auto resp = f.mcp.wait_for_response(id);
  std::string expected;
  for (int i = 0; i < 2000; ++i) expected += "tok" + std::to_string(i) + " ";
  check_streamed_turn(f.mcp, id, resp, expected, 2000);
}

TEST_CASE("mcp: llmx-reply continues the conversation with its history") {
  InitializedMcp f;
  auto first = f.mcp.call_llmx("@mock:echo first question");
  auto r1 = f.mcp.wait_for_response(first);
  REQUIRE_FALSE(result_is_error(r1));
  CHECK(result_text(r1) == "echo: first question");
  const std::string thread = r1.str("/result/structuredContent/threadId");

  auto second = f.mcp.call_reply(thread, "@mock:echo second question");
  auto r2 = f.mcp.wait_for_response(second);
  REQUIRE_FALSE(result_is_error(r2));
  CHECK(result_text(r2) == "echo: second question");
  CHECK(r2.str("/result/structuredContent/threadId") == thread);
  CHECK(r2.str("/result/structuredContent/content") == "echo: second question");

  // The reply's events: no new session_configured, streamed deltas, task_complete before the response.
  auto events = f.mcp.events_for(second);
  REQUIRE_FALSE(events.empty());
  CHECK(events_of_type(events, "session_configured").empty());
  CHECK(joined_deltas(events) == "echo: second question");
  CHECK(events.back().event_type() == "task_complete");
  CHECK(events.back().index() < r2.index());
  for (const auto& e : events) {
    CHECK(e.str("/params/id") == events.front().str("/params/id"));
    if (e.has("/params/msg/thread_id")) CHECK(e.str("/params/msg/thread_id") == thread);
  }

  // The second model request carries the first turn: user question, then the assistant's answer.
  auto reqs = mock_requests(f.mock);
  REQUIRE(array_size(reqs, "/requests") == 2);
  const size_t n = array_size(reqs, "/requests/1/messages");
  std::vector<std::pair<std::string, std::string>> convo;  // (role, content) of user/assistant messages
  for (size_t i = 0; i < n; ++i) {
    const std::string p = "/requests/1/messages/" + std::to_string(i);
    auto role = reqs.str(p + "/role");
    if (role != "user" && role != "assistant") continue;
    std::string content = reqs.at(p + "/content").is_string() ? reqs.str(p + "/content") : reqs.text(p + "/content");
    convo.emplace_back(role, content);
  }
  auto find = [&](std::string_view role, std::string_view needle) -> long {
    for (size_t i = 0; i < convo.size(); ++i)
      if (convo[i].first == role && convo[i].second.find(needle) != std::string::npos) return static_cast<long>(i);
    return -1;
  };
  long q1 = find("user", "@mock:echo first question");
  long a1 = find("assistant", "echo: first question");
  long q2 = find("user", "@mock:echo second question");
  CHECK(q1 >= 0);
  CHECK(a1 > q1);
  CHECK(q2 > a1);
  CHECK(q2 == static_cast<long>(convo.size()) - 1);
  // The first request did not contain the second question.
  CHECK(reqs.text("/requests/0").find("second question") == std::string::npos);
}

TEST_CASE("mcp: a second llmx-reply into a conversation whose call still runs is refused and the first is answered") {
  InitializedMcp f;
  auto r1 = f.mcp.wait_for_response(f.mcp.call_llmx("@mock:echo first"));
  const std::string thread = r1.str("/result/structuredContent/threadId");
  auto slow = f.mcp.call_reply(thread, "@mock:slow delay_ms=200 deltas=3");
  auto intruder = f.mcp.wait_for_response(f.mcp.call_reply(thread, "@mock:echo intruder"));
  CHECK(result_is_error(intruder));
  CHECK(result_text(intruder).find("already running a turn") != std::string::npos);
  auto first = f.mcp.wait_for_response(slow);  // before the fix it never came
  REQUIRE_FALSE(result_is_error(first));
  CHECK(first.str("/result/structuredContent/threadId") == thread);
  // Once it is over, the conversation takes the next call.
  auto next = f.mcp.wait_for_response(f.mcp.call_reply(thread, "@mock:echo next"));
  REQUIRE_FALSE(result_is_error(next));
  CHECK(result_text(next) == "echo: next");
}

TEST_CASE("mcp: llmx-reply with an unknown conversation id is an error result") {
  InitializedMcp f;
  const std::string unknown = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  auto id = f.mcp.call_reply(unknown, "hello");
  auto resp = f.mcp.wait_for_response(id);
  REQUIRE_FALSE(resp.is_error());
  CHECK(result_is_error(resp));
  CHECK(result_text(resp).find(unknown) != std::string::npos);
  CHECK(f.mcp.events_for(id).empty());
  CHECK(array_size(mock_requests(f.mock), "/requests") == 0);
}

TEST_CASE("mcp: llmx-reply with an invalid conversation id is an error result") {
  InitializedMcp f;
  auto id = f.mcp.call_reply("not-a-uuid", "hello");
  auto resp = f.mcp.wait_for_response(id);
  REQUIRE_FALSE(resp.is_error());
  CHECK(result_is_error(resp));
  CHECK(result_text(resp).find("not-a-uuid") != std::string::npos);
  // Missing arguments are a tool error too, not a protocol error.
  auto missing = f.mcp.request("tools/call", R"({"name":"llmx-reply","arguments":{"prompt":"x"}})");
  auto r2 = f.mcp.wait_for_response(missing);
  REQUIRE_FALSE(r2.is_error());
  CHECK(result_is_error(r2));
  CHECK(result_text(r2).find("conversationId") != std::string::npos);
}

TEST_CASE("mcp: an unknown tool name is -32602 (2025-11-25), missing arguments a tool error") {
  InitializedMcp f;
  auto resp = f.mcp.wait_for_response(f.mcp.request("tools/call", R"({"name":"shell","arguments":{}})"));
  REQUIRE(resp.is_error());
  CHECK(resp.integer("/error/code") == -32602);
  CHECK(resp.str("/error/message") == "Unknown tool: shell");
  auto no_args = f.mcp.wait_for_response(f.mcp.request("tools/call", R"({"name":"llmx"})"));
  CHECK(result_is_error(no_args));
  CHECK(result_text(no_args).find("prompt") != std::string::npos);
}

TEST_CASE("mcp: 50 conversations run at once in one process, every event routed to its request") {
  InitializedMcp f;
  constexpr int kCalls = 50;
  std::map<std::string, std::string> expected;  // request id -> answer
  for (int i = 0; i < kCalls; ++i) {
    std::string answer = "answer number " + std::to_string(i) + " for its own call";
    // slow: 5 chunks 300 ms apart, so all 50 turns overlap.
    auto id = f.mcp.call_llmx("@mock:slow delay_ms=300 deltas=3 text=" + answer);
    expected[id] = answer;
  }
  std::set<std::string> threads;
  for (const auto& [id, answer] : expected) {
    const auto& shown_id = id;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_id);
    auto resp = f.mcp.wait_for_response(id, 20s);
    REQUIRE_FALSE(result_is_error(resp));
    threads.insert(check_streamed_turn(f.mcp, id, resp, answer, 3));
  }
  CHECK(threads.size() == static_cast<size_t>(kCalls));

  // All 50 were in flight together: every turn started before the first one completed.
  size_t last_started = 0, first_completed = SIZE_MAX;
  for (const auto& m : f.mcp.log()) {
    if (m.event_type() == "task_started") last_started = std::max(last_started, m.index());
    if (m.event_type() == "task_complete") first_completed = std::min(first_completed, m.index());
  }
  CHECK(last_started < first_completed);
  // Exactly one response per call, and no event without a known request id.
  for (const auto& [id, _] : expected) CHECK(f.mcp.responses_for(id).size() == 1);
  for (const auto& m : f.mcp.log())
    if (m.is_event()) CHECK(expected.count(m.event_request_id()) == 1);
  CHECK(array_size(mock_requests(f.mock), "/requests") == static_cast<size_t>(kCalls));
}

TEST_CASE("mcp: readable notifications/progress follow a call that gives _meta.progressToken") {
  InitializedMcp f;
  auto with_string = f.mcp.call_llmx("@mock:text deltas=3", {}, R"({"progressToken":"tok-1"})");
  auto with_number = f.mcp.call_llmx("@mock:text deltas=3", {}, R"({"progressToken":42})");
  auto without = f.mcp.call_llmx("@mock:text deltas=3");
  auto r1 = f.mcp.wait_for_response(with_string);
  auto r2 = f.mcp.wait_for_response(with_number);
  auto r3 = f.mcp.wait_for_response(without);
  CHECK_FALSE(result_is_error(r1));
  CHECK_FALSE(result_is_error(r2));
  CHECK_FALSE(result_is_error(r3));

  std::map<std::string, std::vector<Message>> by_token;
  for (const auto& m : f.mcp.log())
    if (m.method() == "notifications/progress") by_token[m.text("/params/progressToken")].push_back(m);
  CHECK(by_token.size() == 2);  // nothing for the call without a token
  for (auto [token, resp] : {std::pair{std::string(R"("tok-1")"), r1}, std::pair{std::string("42"), r2}}) {
    const auto& shown_token = token;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_token);
    const auto& progress = by_token[token];
    REQUIRE_FALSE(progress.empty());
    int64_t last = 0;
    for (const auto& p : progress) {
      CHECK(p.integer("/params/progress") > last);  // strictly increasing
      last = p.integer("/params/progress");
      CHECK(p.index() < resp.index());
    }
    // Milestones in words, streaming counted (rate-limited: 3 quick deltas are one message).
    CHECK(progress.front().str("/params/message") == "working");
    CHECK(progress.back().str("/params/message") == "done: answer of 3 tokens");
    CHECK(progress.size() < f.mcp.events_for(resp.id()).size());
  }
}

TEST_CASE("mcp: progress names the command the agent runs") {
  InitializedMcp f;
  auto id = f.mcp.call_llmx("@mock:shell cmd=echo progress-check", {}, R"({"progressToken":"p"})");
  f.mcp.wait_for_response(id);
  std::vector<std::string> messages;
  for (const auto& m : f.mcp.log())
    if (m.method() == "notifications/progress") messages.push_back(m.str("/params/message"));
  CHECK(std::find(messages.begin(), messages.end(), "running `echo progress-check`") != messages.end());
  CHECK(std::find(messages.begin(), messages.end(), "command succeeded") != messages.end());
}

TEST_CASE("mcp: notifications/cancelled interrupts a slow turn without a reply and other calls go on") {
  InitializedMcp f;
  // 7 chunks 1 s apart: ~7 s if the cancel were ignored.
  auto slow = f.mcp.call_llmx("@mock:slow delay_ms=1000 deltas=5");
  auto other = f.mcp.call_llmx("@mock:slow delay_ms=100 deltas=5");
  f.mcp.wait_for(
      [&](const Message& m) { return m.event_request_id() == slow && m.event_type() == "task_started"; },
      "task_started of the slow call");
  const std::string thread = f.mcp.events_for(slow).front().str("/params/msg/session_id");
  const auto cancelled_at = std::chrono::steady_clock::now();
  f.mcp.notify("notifications/cancelled", R"({"requestId":)" + slow + R"(,"reason":"user pressed stop"})");

  // The other call is unaffected.
  auto r_other = f.mcp.wait_for_response(other);
  CHECK_FALSE(result_is_error(r_other));
  CHECK(result_text(r_other) == kMockAnswer);

  // The conversation becomes free again quickly (the turn was interrupted, not finished):
  // llmx-reply is refused while the turn runs and accepted once it has ended.
  auto reply_resp = reply_once_free(f.mcp, thread, cancelled_at);
  CHECK(result_text(reply_resp) == "echo: after cancel");

  // No reply ever for the cancelled request, and its stream stopped: no end-of-turn events.
  f.mcp.drain(200ms);
  CHECK(f.mcp.responses_for(slow).empty());
  auto events = f.mcp.events_for(slow);
  CHECK(events_of_type(events, "task_complete").empty());
  CHECK(events_of_type(events, "turn_aborted").empty());
  // Cancelling an unknown id is ignored.
  f.mcp.notify("notifications/cancelled", R"({"requestId":999})");
  CHECK(f.mcp.wait_for_response(f.mcp.request("ping")).text("/result") == "{}");
}

TEST_CASE("mcp: notifications/cancelled right behind its tools/call still cancels the turn") {
  InitializedMcp f;
  // Both lines in one write: the cancel arrives while the conversation is still being created.
  const std::string call = R"({"jsonrpc":"2.0","id":77,"method":"tools/call","params":)" +
                           llmx_call_params("@mock:slow delay_ms=1000 deltas=5") + "}";
  const std::string cancel = R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}})";
  REQUIRE(f.mcp.process().write_stdin(call + "\n" + cancel + "\n"));
  const auto cancelled_at = std::chrono::steady_clock::now();
  auto configured = f.mcp.wait_for(
      [](const Message& m) { return m.event_request_id() == "77" && m.event_type() == "session_configured"; },
      "session_configured of the cancelled call");
  const std::string thread = configured.str("/params/msg/session_id");
  // The turn was interrupted, so the conversation is free well before the ~7 s turn could end.
  auto reply_resp = reply_once_free(f.mcp, thread, cancelled_at);
  CHECK(result_text(reply_resp) == "echo: after cancel");
  CHECK(f.mcp.responses_for("77").empty());
}

// --- provider failures ------------------------------------------------------------------------------

namespace {

// One `llmx` tool call of a fresh server, to its answer: the reply and the call's events.
struct ToolTurn {
  InitializedMcp f;
  Message resp;
  std::vector<Message> events;
  explicit ToolTurn(const std::string& prompt) {
    auto id = f.mcp.call_llmx(prompt);
    resp = f.mcp.wait_for_response(id);
    events = f.mcp.events_for(id);
  }
  size_t model_requests() { return array_size(mock_requests(f.mock), "/requests"); }
};

}  // namespace

TEST_CASE("mcp: a provider 400 gives an isError result with the provider's message") {
  ToolTurn t("@mock:error400");
  REQUIRE_FALSE(t.resp.is_error());
  CHECK(result_is_error(t.resp));
  CHECK(result_text(t.resp).find("Invalid request (mock): bad field") != std::string::npos);
  CHECK(t.resp.str("/result/structuredContent/threadId") == t.events.front().str("/params/msg/session_id"));
  CHECK(events_of_type(t.events, "error").size() == 1);
  CHECK(events_of_type(t.events, "stream_error").empty());  // a 4xx is not retried
  CHECK(t.model_requests() == 1);
}

TEST_CASE("mcp: a provider 429 is retried and the turn succeeds with a stream_error event") {
  ToolTurn t("@mock:error429 times=1");
  CHECK_FALSE(result_is_error(t.resp));
  CHECK(result_text(t.resp) == kMockAnswer);
  auto retries = events_of_type(t.events, "stream_error");
  REQUIRE(retries.size() == 1);
  CHECK(retries[0].str("/params/msg/message").find("429") != std::string::npos);
  CHECK(retries[0].index() < t.events.back().index());
  CHECK(events_of_type(t.events, "error").empty());
  CHECK(t.model_requests() == 2);
}

TEST_CASE("mcp: a stream cut mid-answer is retried and the turn succeeds") {
  ToolTurn t("@mock:cut times=1");
  CHECK_FALSE(result_is_error(t.resp));
  CHECK(result_text(t.resp) == kMockAnswer);
  CHECK(events_of_type(t.events, "stream_error").size() == 1);
  CHECK(t.events.back().str("/params/msg/last_agent_message") == kMockAnswer);
  CHECK(t.model_requests() == 2);
}

TEST_CASE("mcp: malformed SSE events are skipped and the valid text survives") {
  ToolTurn t("@mock:malformed");
  CHECK_FALSE(result_is_error(t.resp));
  CHECK(result_text(t.resp) == "Valid text survives.");
  CHECK(joined_deltas(t.events) == "Valid text survives.");
}

TEST_CASE("mcp: an error event inside the stream gives an isError result") {
  InitializedMcp f;
  // A bad request inside the stream is final (overload and server errors reconnect: faults tests).
  auto id = f.mcp.call_llmx("@mock:error_chunk kind=invalid");
  auto resp = f.mcp.wait_for_response(id);
  REQUIRE_FALSE(resp.is_error());
  CHECK(result_is_error(resp));
  CHECK(result_text(resp) == "unexpected status 200 OK: Invalid request (mock)");
  CHECK(resp.str("/result/structuredContent/content") == result_text(resp));
  CHECK(f.mcp.responses_for(id).size() == 1);
  // The session goes on.
  auto next = f.mcp.call_llmx("@mock:echo still alive");
  CHECK(result_text(f.mcp.wait_for_response(next)) == "echo: still alive");
  f.mcp.drain(100ms);
  CHECK(f.mcp.responses_for(id).size() == 1);
}

TEST_CASE("mcp: llmx-mcp-server, the seed's binary name next to llmx, is llmx mcp-server") {
  TempDir home;
  MockLlm mock;
  const std::string bin = std::filesystem::path(LLMX_BIN).parent_path() / "llmx-mcp-server";
  REQUIRE(std::filesystem::exists(bin));
  SpawnOptions o;
  o.argv = {bin};
  o.env = llmx_env(home.path(), mock.url());
  ChildProcess p(std::move(o));
  REQUIRE(p.write_stdin(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"));
  auto line = p.read_line();
  REQUIRE(line);
  Message init(*line);
  CHECK(init.str("/result/serverInfo/name") == "llmx-mcp-server");
  p.write_stdin(R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n");
  p.write_stdin(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"llmx","arguments":{"prompt":"@mock:echo by its own name"}}})" "\n");
  std::string text;
  while (auto l = p.read_line()) {
    Message m(*l);
    if (m.has("/id") && m.integer("/id") == 2) {
      text = result_text(m);
      break;
    }
  }
  CHECK(text == "echo: by its own name");
  p.close_stdin();
  CHECK(p.wait().describe() == "exit code 0");
}
