// Approvals over MCP (DECISIONS P3, P4, E12): `llmx mcp-server` asks the client with
// elicitation/create before a command runs under approval-policy untrusted; the client's answer
// (accept / decline / a JSON-RPC error / the legacy {decision} / abort / silence) decides.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// An mcp-server plus a workspace; calls run `@mock:shell cmd=...` under workspace-write/untrusted.
struct ApprovalFixture {
  TempDir ws{"llmx-approval-ws"};
  McpServerFixture f;

  explicit ApprovalFixture(McpOptions options = {}, std::string_view capabilities = R"({"elicitation":{}})")
      : f(std::move(options)) {
    f.mcp.initialize("2025-11-25", capabilities);
  }

  std::string args() const {
    return R"("sandbox":"workspace-write","approval-policy":"untrusted","cwd":)" + json_quote(ws.path());
  }
  std::string call(const std::string& cmd) { return f.mcp.call_llmx("@mock:shell cmd=" + cmd, args()); }

  // The next elicitation/create the server sends (each is only returned once).
  Message next_elicitation(Duration timeout = kDefaultTimeout) {
    const size_t after = seen_;
    auto m = f.mcp.wait_for(
        [&](const Message& m) { return m.index() >= after && m.is_request() && m.method() == "elicitation/create"; },
        "an elicitation/create request", timeout);
    seen_ = m.index() + 1;
    return m;
  }
  // Runs `cmd`, answers its one approval request with `reply`, and returns the call's response.
  Message call_answered(const std::string& cmd, std::string_view reply) {
    auto id = call(cmd);
    auto ask = next_elicitation();
    f.mcp.respond(ask.id(), reply);
    return f.mcp.wait_for_response(id);
  }
  size_t elicitations() const {
    size_t n = 0;
    for (const auto& m : f.mcp.log()) n += m.is_request() && m.method() == "elicitation/create";
    return n;
  }

  // What the model was last told about a call: the last tool message of the last chat request.
  std::string last_tool_output() {
    auto outputs = tool_messages(recorded_requests(f.mock));
    REQUIRE_FALSE(outputs.empty());
    return outputs.back();
  }

 private:
  size_t seen_ = 0;
};

constexpr std::string_view kApproved = R"({"action":"accept","content":{"decision":"approved"}})";

}  // namespace

TEST_CASE("tools/approval: a client that declared no elicitation is never asked, the policy decides at once") {
  // approval_timeout is long: waiting it out would fail the test's own timeout.
  for (auto caps : {std::string_view("{}"), std::string_view(R"({"elicitation":{"url":{}}})")}) {
    CAPTURE(caps);
    ApprovalFixture a({.args = {"-c", "approval_timeout=600"}}, caps);
    auto resp = a.f.mcp.wait_for_response(a.call("touch refused.txt"));
    CHECK_FALSE(result_is_error(resp));
    CHECK(a.elicitations() == 0);
    CHECK_FALSE(fs::exists(fs::path(a.ws.path()) / "refused.txt"));
    CHECK(a.last_tool_output().find("cannot ask for approvals") != std::string::npos);
  }
}

TEST_CASE("tools/approval: elicitation/create carries a decision schema, accept+approved runs the command") {
  ApprovalFixture a;
  auto id = a.call("touch made.txt");
  auto ask = a.next_elicitation();
  CHECK(ask.str("/params/message").find("touch made.txt") != std::string::npos);
  CHECK(ask.str("/params/requestedSchema/type") == "object");
  CHECK(ask.str("/params/mode") == "form");
  CHECK(ask.str("/params/requestedSchema/properties/decision/type") == "string");
  CHECK(ask.text("/params/requestedSchema/properties/decision/enum") ==
        R"(["approved","approved_for_session","denied","abort"])");
  CHECK(ask.text("/params/requestedSchema/required") == R"(["decision"])");
  CHECK(ask.str("/params/_meta/llmx_call_id") == "call_shell_1");
  CHECK(ask.str("/params/_meta/llmx_elicitation") == "exec-approval");
  CHECK(ask.str("/params/_meta/llmx_mcp_tool_call_id") == id);
  CHECK(ask.text("/params/_meta/llmx_command") == R"(["bash","-lc","touch made.txt"])");
  CHECK(fs::equivalent(ask.str("/params/_meta/llmx_cwd"), a.ws.path()));
  // Nothing ran before the answer, and the call waits for it.
  CHECK_FALSE(fs::exists(a.ws.file("made.txt")));
  CHECK(a.f.mcp.responses_for(id).empty());

  a.f.mcp.respond(ask.id(), kApproved);
  auto resp = a.f.mcp.wait_for_response(id);
  INFO(resp.line());
  CHECK_FALSE(result_is_error(resp));
  CHECK(contains(result_text(resp), "The command printed: Exit code: 0"));
  CHECK(fs::exists(a.ws.file("made.txt")));
  auto events = a.f.mcp.events_for(id);
  CHECK(events_of_type(events, "exec_approval_request").size() == 1);
  CHECK(events_of_type(events, "exec_command_begin").size() == 1);
  REQUIRE(events_of_type(events, "exec_command_end").size() == 1);
  CHECK(events_of_type(events, "exec_command_end")[0].integer("/params/msg/exit_code") == 0);
}

TEST_CASE("tools/approval: decline and a JSON-RPC error reply both deny, the model is told and the turn completes") {
  for (const bool as_error : {false, true}) {
    CAPTURE(as_error);
    ApprovalFixture a;
    auto id = a.call("touch made.txt");
    auto ask = a.next_elicitation();
    if (as_error)
      a.f.mcp.respond_error(ask.id(), -32000, "the user closed the dialog");
    else
      a.f.mcp.respond(ask.id(), R"({"action":"decline"})");
    auto resp = a.f.mcp.wait_for_response(id);
    INFO(resp.line());
    CHECK_FALSE(result_is_error(resp));
    CHECK(events_of_type(a.f.mcp.events_for(id), "task_complete").size() == 1);
    CHECK(events_of_type(a.f.mcp.events_for(id), "exec_command_begin").empty());
    CHECK_FALSE(fs::exists(a.ws.file("made.txt")));
    auto told = a.last_tool_output();
    CHECK(contains(told, "rejected by user"));
    CHECK(contains(result_text(resp), "rejected by user"));  // the mock quotes what it was told
  }
}

TEST_CASE("tools/approval: the legacy {decision: approved} reply runs the command") {
  ApprovalFixture a;
  auto resp = a.call_answered("touch legacy.txt", R"({"decision":"approved"})");
  CHECK_FALSE(result_is_error(resp));
  CHECK(fs::exists(a.ws.file("legacy.txt")));
  CHECK(contains(a.last_tool_output(), "Exit code: 0"));
}

TEST_CASE("tools/approval: abort ends the call as an aborted turn and nothing runs") {
  ApprovalFixture a;
  auto resp = a.call_answered("touch aborted.txt", R"({"action":"accept","content":{"decision":"abort"}})");
  INFO(resp.line());
  CHECK(result_is_error(resp));
  CHECK(result_text(resp) == "Turn aborted: interrupted");
  auto events = a.f.mcp.events_for(resp.id());
  CHECK(events_of_type(events, "turn_aborted").size() == 1);
  CHECK(events_of_type(events, "task_complete").empty());
  CHECK(events_of_type(events, "exec_command_begin").empty());
  CHECK_FALSE(fs::exists(a.ws.file("aborted.txt")));
  // The model is not asked again after an abort.
  auto reqs = recorded_requests(a.f.mock);
  CHECK(reqs.at("/requests").get_array().value_unsafe().size() == 1);
  // The session goes on.
  auto next = a.f.mcp.call_llmx("@mock:echo after abort");
  CHECK(result_text(a.f.mcp.wait_for_response(next)) == "echo: after abort");
}

TEST_CASE("tools/approval: an unanswered request is denied after approval_timeout and the model is told") {
  ApprovalFixture a({.args = {"-c", "approval_timeout=1"}});
  auto id = a.call("touch never.txt");
  auto ask = a.next_elicitation();
  const auto asked_at = Clock::now();
  auto resp = a.f.mcp.wait_for_response(id, 10s);
  const auto waited = Clock::now() - asked_at;
  INFO(resp.line());
  CHECK(waited >= 900ms);
  CHECK(waited < 5s);
  CHECK_FALSE(result_is_error(resp));
  CHECK_FALSE(fs::exists(a.ws.file("never.txt")));
  auto told = a.last_tool_output();
  CHECK(contains(told, "rejected by user"));
  CHECK(contains(told, "treated as denied"));
  // A late answer to the expired request is ignored: nothing runs, the server still answers.
  a.f.mcp.respond(ask.id(), kApproved);
  CHECK(a.f.mcp.wait_for_response(a.f.mcp.request("ping")).text("/result") == "{}");
  std::this_thread::sleep_for(200ms);
  CHECK_FALSE(fs::exists(a.ws.file("never.txt")));
}

TEST_CASE("tools/approval: approved_for_session is not asked again for the same command in the conversation") {
  ApprovalFixture a;
  auto r1 = a.call_answered("touch session.txt", R"({"action":"accept","content":{"decision":"approved_for_session"}})");
  REQUIRE_FALSE(result_is_error(r1));
  REQUIRE(fs::exists(a.ws.file("session.txt")));
  fs::remove(a.ws.file("session.txt"));
  const std::string thread = r1.str("/result/structuredContent/threadId");

  auto second = a.f.mcp.call_reply(thread, "@mock:shell cmd=touch session.txt");
  auto r2 = a.f.mcp.wait_for_response(second);
  INFO(r2.line());
  CHECK_FALSE(result_is_error(r2));
  CHECK(a.elicitations() == 1);  // no second question
  CHECK(events_of_type(a.f.mcp.events_for(second), "exec_approval_request").empty());
  CHECK(fs::exists(a.ws.file("session.txt")));  // and it ran again

  // A different command still asks.
  auto third = a.f.mcp.call_reply(thread, "@mock:shell cmd=touch other.txt");
  auto ask3 = a.next_elicitation();
  CHECK(ask3.str("/params/message").find("touch other.txt") != std::string::npos);
  a.f.mcp.respond(ask3.id(), R"({"action":"decline"})");
  CHECK_FALSE(result_is_error(a.f.mcp.wait_for_response(third)));
  CHECK_FALSE(fs::exists(a.ws.file("other.txt")));
}

TEST_CASE("tools/approval: a plain approved is asked again on the next turn") {
  ApprovalFixture a;
  auto first = a.call("touch once.txt");
  a.f.mcp.respond(a.next_elicitation().id(), kApproved);
  auto r1 = a.f.mcp.wait_for_response(first);
  REQUIRE_FALSE(result_is_error(r1));
  auto second = a.f.mcp.call_reply(r1.str("/result/structuredContent/threadId"), "@mock:shell cmd=touch once.txt");
  auto ask = a.next_elicitation();
  a.f.mcp.respond(ask.id(), kApproved);
  CHECK_FALSE(result_is_error(a.f.mcp.wait_for_response(second)));
  CHECK(a.elicitations() == 2);
}

TEST_CASE("tools/approval: approval_timeout counts from each request, not from an earlier one with the same call id") {
  // The mock names every shell call `call_shell_1`, as a model may reuse ids across turns. The
  // first turn's request is answered at once; the second turn's request must still get the
  // full timeout (3 s) before it counts as denied.
  ApprovalFixture a({.args = {"-c", "approval_timeout=3"}});
  auto first = a.call("touch t1.txt");
  auto ask1 = a.next_elicitation();
  const auto first_asked = Clock::now();
  a.f.mcp.respond(ask1.id(), kApproved);
  auto r1 = a.f.mcp.wait_for_response(first);
  REQUIRE_FALSE(result_is_error(r1));
  std::this_thread::sleep_until(first_asked + 1500ms);

  auto second = a.f.mcp.call_reply(r1.str("/result/structuredContent/threadId"), "@mock:shell cmd=touch t2.txt");
  a.next_elicitation();
  const auto second_asked = Clock::now();
  auto r2 = a.f.mcp.wait_for_response(second, 10s);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - second_asked);
  INFO("the second request was denied after " << waited.count() << " ms");
  CHECK(waited >= 2700ms);
  CHECK(contains(a.last_tool_output(), "treated as denied"));
}
