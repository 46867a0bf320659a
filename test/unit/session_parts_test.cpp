// The session's plain parts, without an actor system: tools/call bookkeeping (ToolCalls),
// listeners (Listeners), and the requests we send the client (approval_ask, OutgoingRequests).
#include <doctest/doctest.h>

#include "actors/listeners.hpp"
#include "actors/outgoing_requests.hpp"
#include "actors/tool_calls.hpp"

using namespace llmx;

namespace {

rpc::Id id(int64_t n) { return rpc::Id::from_int(n); }
Event ev(std::string sub, EventMsg msg) { return Event{std::move(sub), std::move(msg)}; }
// Request n starts a call in `conversation`, its submission id n, without progress.
const ToolCall* start_call(ToolCalls& calls, int64_t n, const std::string& conversation) {
  calls.starting(id(n));
  return calls.start(id(n), conversation, {}, std::to_string(n), std::nullopt);
}
ExecApprovalRequestEvent exec_ask() {
  ExecApprovalRequestEvent e;
  e.call_id = "call-1";
  e.command = {"touch", "a b"};
  e.cwd = "/w";
  return e;
}

}  // namespace

TEST_CASE("tool calls: a call's events become notifications, approvals and one final result") {
  ToolCalls calls;
  calls.starting(id(7));
  const auto* call = calls.start(id(7), "c1", {}, "7", RawJson{"\"tok\""});
  REQUIRE(call);
  CHECK_FALSE(call->cancelled);
  REQUIRE(calls.running("c1"));
  CHECK_FALSE(calls.on_event("c1", ev("other-sub", AgentMessageDeltaEvent{"x"})));  // not this call's
  CHECK_FALSE(calls.on_event("c2", ev("7", AgentMessageDeltaEvent{"x"})));

  auto delta = calls.on_event("c1", ev("7", AgentMessageDeltaEvent{"x"}));
  REQUIRE(delta);
  CHECK(delta->forward);
  CHECK(delta->progress == "answer: 1 tokens");
  CHECK(delta->call->progress.progress() == 1);
  CHECK_FALSE(delta->ask_approval);
  CHECK_FALSE(delta->result);

  auto ask = calls.on_event("c1", ev("7", exec_ask()));
  REQUIRE(ask);
  CHECK(ask->ask_approval);
  CHECK(ask->progress == "waiting for approval to run `touch 'a b'`");
  CHECK(ask->call->progress.progress() == 2);

  auto err = calls.on_event("c1", ev("7", ErrorEvent{"boom"}));  // answers at once...
  REQUIRE(err);
  CHECK(err->result == "boom");
  CHECK(err->result_is_error);
  CHECK_FALSE(err->ended);
  auto done = calls.on_event("c1", ev("7", TaskCompleteEvent{std::string("late")}));  // ...and only once
  REQUIRE(done);
  CHECK_FALSE(done->result);
  CHECK(done->ended);
  CHECK(calls.empty());
}

TEST_CASE("tool calls: a second call into a conversation whose call still runs is refused, the first keeps its place") {
  ToolCalls calls;
  REQUIRE(start_call(calls, 1, "c1"));
  CHECK_FALSE(start_call(calls, 2, "c1"));
  // Refused and forgotten, not left starting: a cancel of its id marks nothing that could later
  // come out as a cancelled call.
  CHECK_FALSE(calls.cancel("2"));
  const auto* reused = calls.start(id(2), "c2", {}, "2", std::nullopt);
  REQUIRE(reused);
  CHECK_FALSE(reused->cancelled);
  calls.drop("c2");
  REQUIRE(calls.running("c1"));
  CHECK(calls.running("c1")->request_id.json == "1");
  CHECK_FALSE(calls.on_event("c1", ev("2", AgentMessageDeltaEvent{"x"})));  // the refused call's id owns nothing
  auto done = calls.on_event("c1", ev("1", TaskCompleteEvent{std::string("first")}));
  REQUIRE(done);
  CHECK(done->result == "first");
  CHECK(done->ended);
  CHECK(calls.start(id(3), "c1", {}, "3", std::nullopt));  // once it is over, the next one starts
}

TEST_CASE("tool calls: cancelled before or while running, a call says nothing more and is interrupted once") {
  ToolCalls calls;
  calls.starting(id(1));
  CHECK_FALSE(calls.cancel("1"));  // still starting: nothing to interrupt yet
  CHECK(calls.start(id(1), "c1", {}, "1", std::nullopt)->cancelled);

  start_call(calls, 2, "c2");
  auto interrupt = calls.cancel("2");
  REQUIRE(interrupt);
  CHECK(interrupt->sub_id == "2");
  CHECK_FALSE(calls.cancel("2"));  // once
  auto aborted = calls.on_event("c2", ev("2", TurnAbortedEvent{TurnAbortReason::interrupted}));
  REQUIRE(aborted);
  CHECK_FALSE(aborted->forward);
  CHECK_FALSE(aborted->result);  // a cancelled request gets no reply (P6)
  CHECK(aborted->ended);

  CHECK(calls.cancel_all().size() == 1);  // c1 still runs
  calls.starting(id(3));
  calls.abandon(id(3));
  CHECK_FALSE(calls.cancel("3"));
  auto dropped = calls.drop("c1");
  REQUIRE(dropped);
  CHECK(dropped->call->cancelled);
  CHECK_FALSE(dropped->result);  // cancelled: no reply
  start_call(calls, 4, "c4");
  auto died = calls.drop("c4");  // its conversation died mid-turn: an error result
  REQUIRE(died);
  CHECK(died->result == "The conversation ended before its turn completed.");
  CHECK(died->result_is_error);
  CHECK(died->call->request_id.json == "4");
  CHECK(calls.empty());
}

TEST_CASE("listeners: indexed by conversation, raw events only where asked for, forgotten with it") {
  Listeners l;
  auto a = l.add("c1", false);
  auto b = l.add("c1", true);
  l.add("c2", false);
  CHECK(a != b);
  CHECK(l.interest("c1", false).copies == 2);
  CHECK(l.interest("c1", true).copies == 1);
  CHECK(l.interest("c1", true).any);
  CHECK_FALSE(l.interest("c3", false).any);
  CHECK(l.remove(b));
  CHECK_FALSE(l.remove(b));
  CHECK(l.interest("c1", true).copies == 0);
  CHECK(l.interest("c1", true).any);  // still listened to: its approvals are asked
  l.forget("c1");
  CHECK_FALSE(l.interest("c1", false).any);
  CHECK_FALSE(l.remove(a));
  CHECK(l.interest("c2", false).copies == 1);
}

TEST_CASE("outgoing requests: one approval event, the right request per route, answers routed once") {
  auto event = ev("sub", exec_ask());
  auto v1 = approval_ask(event, "conv", nullptr);
  REQUIRE(v1);
  CHECK(v1->method == "execCommandApproval");
  CHECK(v1->call_id == "call-1");
  CHECK(v1->params.find(R"("conversationId":"conv")") != std::string::npos);
  mcp::ElicitationTag tool{id(42), "sub"};
  auto mcp = approval_ask(event, "conv", &tool);
  REQUIRE(mcp);
  CHECK(mcp->method == "elicitation/create");
  CHECK(mcp->params.find("touch 'a b'") != std::string::npos);
  CHECK(mcp->params.find(R"("mode":"form","_meta":{"llmx_elicitation":"exec-approval")") != std::string::npos);
  // Before 2025-11-25: the reference's layout, correlation fields in the params.
  mcp::ElicitationTag old{id(42), "sub", {}, false};
  auto legacy = approval_ask(event, "conv", &old);
  REQUIRE(legacy);
  CHECK(legacy->params.find(R"(,"llmx_elicitation":"exec-approval")") != std::string::npos);
  CHECK(legacy->params.find("_meta") == std::string::npos);
  CHECK(legacy->params.find("mode") == std::string::npos);
  // A task's question carries its tag.
  mcp::ElicitationTag tasked{id(42), "sub", "t-1"};
  CHECK(approval_ask(event, "conv", &tasked)->params.find(R"({"io.modelcontextprotocol/related-task":{"taskId":"t-1"})") !=
        std::string::npos);
  ApplyPatchApprovalRequestEvent patch;
  patch.call_id = "p";
  auto p = approval_ask(ev("s", patch), "conv", nullptr);
  REQUIRE(p);
  CHECK(p->method == "applyPatchApproval");
  CHECK(p->kind == AskKind::patch);
  CHECK_FALSE(approval_ask(ev("s", AgentMessageEvent{"hi"}), "conv", nullptr));

  // A configured server's own question: elicitation/create for an MCP host (its form kept), a
  // server request for an app-server client.
  ElicitationRequestEvent question{"docs", "k/elicitation/1", "Name?", RawJson{R"({"type":"object"})"}};
  auto forwarded = approval_ask(ev("s", question), "conv", &tool);
  REQUIRE(forwarded);
  CHECK(forwarded->method == "elicitation/create");
  CHECK(forwarded->kind == AskKind::elicitation);
  CHECK(forwarded->server_name == "docs");
  CHECK(forwarded->call_id == "k/elicitation/1");
  CHECK(forwarded->params.find(R"("requestedSchema":{"type":"object"})") != std::string::npos);
  auto app = approval_ask(ev("s", question), "conv", nullptr);
  REQUIRE(app);
  CHECK(app->method == "mcpServer/elicitation/request");
  CHECK(app->params.find(R"("serverName":"docs")") != std::string::npos);

  OutgoingRequests out;
  auto first = out.add(PendingApproval{{}, "call-1", AskKind::exec, {}});
  auto second = out.add(PendingApproval{{}, "p", AskKind::patch, {}});
  CHECK(first.json == "0");
  CHECK(second.json == "1");
  CHECK_FALSE(out.take(rpc::Id{"\"1\""}));  // a string id we never sent
  CHECK_FALSE(out.take(rpc::Id{"1.0"}));
  auto got = out.take(second);
  REQUIRE(got);
  CHECK(got->call_id == "p");
  CHECK(got->kind == AskKind::patch);
  CHECK_FALSE(out.take(second));  // answered once
  CHECK(out.size() == 1);
}

TEST_CASE("tool calls: events of interleaved conversations find their own call, also after one ended") {
  ToolCalls calls;
  REQUIRE(start_call(calls, 1, "c1"));
  REQUIRE(start_call(calls, 2, "c2"));
  for (int i = 0; i < 3; ++i) {
    auto a = calls.on_event("c1", ev("1", AgentMessageDeltaEvent{"a"}));
    REQUIRE(a);
    CHECK(a->call->request_id == id(1));
    auto b = calls.on_event("c2", ev("2", AgentMessageDeltaEvent{"b"}));
    REQUIRE(b);
    CHECK(b->call->request_id == id(2));
  }
  auto done = calls.on_event("c1", ev("1", TaskCompleteEvent{std::string("ok")}));
  REQUIRE(done);
  CHECK(done->ended);
  CHECK_FALSE(calls.on_event("c1", ev("1", AgentMessageDeltaEvent{"late"})));  // gone with its call
  REQUIRE(start_call(calls, 3, "c1"));  // the conversation's next call
  CHECK_FALSE(calls.on_event("c1", ev("1", AgentMessageDeltaEvent{"old turn"})));
  auto next = calls.on_event("c1", ev("3", AgentMessageDeltaEvent{"new"}));
  REQUIRE(next);
  CHECK(next->call->request_id == id(3));
  REQUIRE(calls.on_event("c2", ev("2", AgentMessageDeltaEvent{"b"})));
}
