// The Agent Client Protocol's plain parts (protocol/rpc/acp.*): prompts, MCP server entries,
// events as session/update, permissions and stop reasons.
#include <doctest/doctest.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/acp.hpp"
#include "sandbox/apply_patch.hpp"

using namespace llmx;

namespace {

// The update of a session/update params line.
std::string update_of(rpc::Notes::Note note, std::string_view pointer) {
  CHECK(note.method == "session/update");
  json::Parser p;
  auto v = p.parse(note.params).at_pointer(std::string("/update") + std::string(pointer));
  if (v.error()) return "<missing>";
  return v.is_string() ? std::string(v.get_string().value_unsafe()) : json::to_text(v.value_unsafe());
}

}  // namespace

TEST_CASE("acp: a prompt's blocks become the turn's text") {
  auto text = acp::prompt_text(RawJson{R"([{"type":"text","text":"fix it"},{"type":"resource_link","name":"a.c","uri":"file:///w/a.c"},)"
                                       R"({"type":"resource","resource":{"uri":"file:///w/b.c","text":"int x;"}}])"});
  CHECK(text == "fix it\n[a.c](file:///w/a.c)\n<context uri=\"file:///w/b.c\">\nint x;\n</context>");
  CHECK_THROWS_AS(acp::prompt_text(RawJson{R"([{"type":"video"}])"}), json::DecodeError);
  CHECK_THROWS_AS(acp::prompt_text(RawJson{R"({"type":"text"})"}), json::DecodeError);
}

TEST_CASE("acp: the client's MCP servers become config overrides") {
  auto o = acp::mcp_server_overrides(RawJson{
      R"([{"name":"fs","command":"/bin/srv","args":["-v"],"env":[{"name":"K","value":"V"}]},)"
      R"({"type":"http","name":"web","url":"http://127.0.0.1:9/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]}])"});
  REQUIRE(o.size() == 2);
  CHECK(o[0].first == "mcp_servers.fs");
  CHECK(o[0].second.text == R"({"command":"/bin/srv","args":["-v"],"env":{"K":"V"}})");
  CHECK(o[1].first == "mcp_servers.web");
  CHECK(o[1].second.text == R"({"url":"http://127.0.0.1:9/mcp","http_headers":{"Authorization":"Bearer t"}})");
  CHECK(acp::mcp_server_overrides(std::nullopt).empty());
  CHECK_THROWS_AS(acp::mcp_server_overrides(RawJson{R"([{"name":"a.b","command":"x"}])"}), json::DecodeError);
  CHECK_THROWS_AS(acp::mcp_server_overrides(RawJson{R"([{"type":"sse","name":"s","url":"u"}])"}), json::DecodeError);
  CHECK_THROWS_AS(acp::mcp_server_overrides(RawJson{R"([{"name":"s"}])"}), json::DecodeError);
}

TEST_CASE("acp: a turn's events become session updates, and its end the stop reason") {
  acp::AcpTurn turn("s1");
  rpc::Notes u;
  turn.translate(Event{"1", AgentMessageDeltaEvent{"Hel"}}, u);
  turn.translate(Event{"1", AgentReasoningDeltaEvent{"hmm"}}, u);
  ExecCommandBeginEvent begin;
  begin.call_id = "c1";
  begin.command = {"bash", "-lc", "ls -la"};
  begin.cwd = "/w";
  turn.translate(Event{"1", begin}, u);
  ExecCommandEndEvent end;
  end.call_id = "c1";
  end.exit_code = 2;
  end.aggregated_output = "boom";
  turn.translate(Event{"1", end}, u);
  PatchApplyBeginEvent patch;
  patch.call_id = "p1";
  patch.changes["/w/new.txt"] = FileChange{FileAdd{"hello\n"}};
  turn.translate(Event{"1", patch}, u);
  turn.translate(Event{"1", TokenCountEvent{}}, u);  // nothing for the editor
  REQUIRE(u.size() == 5);
  CHECK(update_of(u[0], "/sessionUpdate") == "agent_message_chunk");
  CHECK(update_of(u[0], "/content/text") == "Hel");
  CHECK(update_of(u[1], "/sessionUpdate") == "agent_thought_chunk");
  CHECK(update_of(u[2], "/sessionUpdate") == "tool_call");
  CHECK(update_of(u[2], "/toolCallId") == "c1");
  CHECK(update_of(u[2], "/status") == "in_progress");
  CHECK(update_of(u[3], "/status") == "failed");
  CHECK(update_of(u[3], "/content/0/content/text") == "boom");
  CHECK(update_of(u[4], "/kind") == "edit");
  CHECK(update_of(u[4], "/content/0/type") == "diff");
  CHECK(update_of(u[4], "/content/0/oldText") == "null");
  CHECK(update_of(u[4], "/content/0/newText") == "hello\n");
  CHECK(update_of(u[4], "/locations/0/path") == "/w/new.txt");

  CHECK_FALSE(turn.stop_reason(Event{"1", AgentMessageDeltaEvent{"x"}}));
  CHECK(turn.stop_reason(Event{"1", TaskCompleteEvent{}}) == "end_turn");
  CHECK(turn.stop_reason(Event{"1", TurnAbortedEvent{}}) == "cancelled");
  acp::AcpTurn cut("s1");
  CHECK_FALSE(cut.stop_reason(Event{"1", WarningEvent{std::string(kOutputLimitWarning)}}));
  CHECK(cut.stop_reason(Event{"1", TaskCompleteEvent{}}) == "max_tokens");
  acp::AcpTurn filtered("s1");
  filtered.stop_reason(Event{"1", WarningEvent{std::string(kContentFilterWarning)}});
  CHECK(filtered.stop_reason(Event{"1", TaskCompleteEvent{}}) == "refusal");
  acp::AcpTurn overflow("s1");
  overflow.stop_reason(Event{"1", ErrorEvent{"This model's maximum context length is 8192 tokens"}});
  CHECK(overflow.stop_reason(Event{"1", TaskCompleteEvent{}}) == "max_tokens");
  CHECK_FALSE(overflow.error());
  acp::AcpTurn failed("s1");
  CHECK_FALSE(failed.stop_reason(Event{"1", ErrorEvent{"upstream said 500"}}));
  CHECK(failed.stop_reason(Event{"1", TaskCompleteEvent{}}) == "end_turn");
  CHECK(failed.error() == "upstream said 500");
  acp::AcpTurn ending("s1");
  rpc::Notes closing;
  ExecCommandBeginEvent open;
  open.call_id = "c7";
  ending.translate(Event{"1", open}, closing);
  closing.clear();
  auto done = ending.finish(Event{"1", TurnAbortedEvent{}}, closing);
  REQUIRE(done);
  CHECK(done->result == R"({"stopReason":"cancelled"})");
  REQUIRE(closing.size() == 1);  // the command it left running ends as failed
  CHECK(update_of(closing[0], "/status") == "failed");
  acp::AcpTurn erred("s1");
  CHECK_FALSE(erred.finish(Event{"1", ErrorEvent{"boom"}}, closing));
  auto err = erred.finish(Event{"1", TaskCompleteEvent{}}, closing);
  REQUIRE(err);
  CHECK(err->error == "boom");
  CHECK_FALSE(err->result);
}

TEST_CASE("acp: an approval is a permission request, and its answer a decision") {
  ExecApprovalRequestEvent ask;
  ask.call_id = "c9";
  ask.command = {"rm", "-f", "x"};
  ask.cwd = "/w";
  auto p = acp::permission_request("s1", Event{"1", ask});
  REQUIRE(p);
  CHECK(p->call_id == "c9");
  CHECK_FALSE(p->patch);
  json::Parser parser;
  auto root = parser.parse(p->params);
  CHECK(std::string(root.at_pointer("/sessionId").get_string().value_unsafe()) == "s1");
  CHECK(std::string(root.at_pointer("/toolCall/toolCallId").get_string().value_unsafe()) == "c9");
  CHECK(json::to_text(root.at_pointer("/options").value_unsafe()).find("reject_always") != std::string::npos);
  CHECK_FALSE(acp::permission_request("s1", Event{"1", AgentMessageDeltaEvent{"x"}}));
  ApplyPatchApprovalRequestEvent patch_ask;
  patch_ask.call_id = "p9";
  auto pp = acp::permission_request("s1", Event{"1", patch_ask});
  REQUIRE(pp);
  CHECK(pp->patch);
  CHECK(pp->call_id == "p9");
  auto decision = [](std::string_view text) {
    json::Parser p;
    try {
      return acp::decision_of(p.parse(text));
    } catch (const json::DecodeError&) {
      return acp::decision_of(std::nullopt);
    }
  };
  CHECK(decision(R"({"outcome":{"outcome":"selected","optionId":"allow_once"}})") == ReviewDecision::approved);
  CHECK(decision(R"({"outcome":{"outcome":"selected","optionId":"allow_always"}})") == ReviewDecision::approved_for_session);
  CHECK(decision(R"({"outcome":{"outcome":"selected","optionId":"reject_once"}})") == ReviewDecision::denied);
  CHECK(decision(R"({"outcome":{"outcome":"selected","optionId":"reject_always"}})") == ReviewDecision::abort);
  CHECK(decision(R"({"outcome":{"outcome":"cancelled"}})") == ReviewDecision::abort);
  CHECK(decision("garbage") == ReviewDecision::denied);
  CHECK(decision("[]") == ReviewDecision::denied);
}

TEST_CASE("acp: initialize speaks version 1 and the modes are the approval presets") {
  json::Parser parser;
  auto init = parser.parse(acp::initialize_result());
  CHECK(init.at_pointer("/protocolVersion").get_int64().value_unsafe() == 1);
  CHECK(init.at_pointer("/agentCapabilities/loadSession").get_bool().value_unsafe());
  CHECK(acp::find_mode("read-only"));
  CHECK(acp::find_mode("full-access")->approval_policy == "never");
  CHECK_FALSE(acp::find_mode("yolo"));
  CHECK(acp::mode_state("auto").find(R"("currentModeId":"auto")") != std::string::npos);
  CHECK(acp::mode_of("on-request", "workspace-write") == "auto");
  CHECK(acp::mode_of("untrusted", "workspace-write") == "configured");
  CHECK(acp::mode_state("configured").find(R"("id":"configured")") != std::string::npos);
  CHECK(acp::mode_state("auto").find(R"("id":"configured")") == std::string::npos);
}

TEST_CASE("acp: a patch's unified diff undone gives the old text an editor shows") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a\nb\nc\n", "a\nB\nc\n"},
      {"one\ntwo\nthree\nfour\nfive\nsix\nseven\n", "one\n2\nthree\nfour\nfive\nsix\n7\nextra\n"},
      {"keep\n", "new first\nkeep\n"},
      {"x\ny\nz\n", "x\nz\n"},
      {"l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\n", "l1\nL2\nl3\nl4\nl5\nl6\nl7\nL8\nl9\n"},
  };
  for (const auto& c : cases) {
    const auto& before = c.first;  // not a structured binding: clang 14 cannot capture one
    const auto& after = c.second;
    CAPTURE(before);
    auto diff = patch::unified_diff(before, after, 1);
    CHECK(acp::undo_unified_diff(after, diff) == before);
  }
  auto no_newline = patch::unified_diff("a\nb", "a\nc\n", 1);  // the old text had no final newline
  CHECK(acp::undo_unified_diff("a\nc\n", no_newline) == std::optional<std::string>("a\nb"));
  CHECK_FALSE(acp::undo_unified_diff("short\n", "@@ -1,5 +1,5 @@\n a\n-b\n+c\n d\n e\n f\n"));  // does not fit
  CHECK_FALSE(acp::undo_unified_diff("a\n", "no hunks here"));
}

TEST_CASE("acp: a stored session's history replays as its messages") {
  auto updates = acp::replay_updates(
      "s1", RawJson{R"([{"type":"user_message","message":"hi","images":[]},{"type":"agent_message","message":"hello"},)"
                    R"({"type":"token_count","info":null,"rate_limits":null}])"});
  REQUIRE(updates.size() == 2);
  CHECK(update_of(updates[0], "/sessionUpdate") == "user_message_chunk");
  CHECK(update_of(updates[0], "/content/text") == "hi");
  CHECK(update_of(updates[1], "/sessionUpdate") == "agent_message_chunk");
  CHECK_THROWS_AS(acp::replay_updates("s1", RawJson{"{"}), json::DecodeError);
}

TEST_CASE("acp: the fs/* requests and the text of a read's answer") {
  CHECK(acp::read_text_file_params("s1", "/w/a.txt") == R"({"sessionId":"s1","path":"/w/a.txt"})");
  CHECK(acp::write_text_file_params("s1", "/w/a.txt", "x\n") == R"({"sessionId":"s1","path":"/w/a.txt","content":"x\n"})");
  json::Parser p;
  CHECK(acp::read_text_file_content(p.parse(R"({"content":"hello\n"})")) == std::optional<std::string>("hello\n"));
  json::Parser q;
  CHECK_FALSE(acp::read_text_file_content(q.parse(R"({"text":"hello"})")));
  json::Parser r;
  CHECK_FALSE(acp::read_text_file_content(r.parse("null")));
}

TEST_CASE("rpc notes: cleared, they keep a streaming-sized buffer but not one a large event grew") {
  const std::string delta = R"({"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}})";
  rpc::Notes notes;
  notes.add("session/update") += delta;
  notes.add("session/update") += R"({"b":2})";
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].method == "session/update");
  CHECK(notes[0].params == delta);
  CHECK(notes[1].params == R"({"b":2})");
  const auto kept = notes[0].params.data();
  notes.clear();
  CHECK(notes.empty());
  notes.add("session/update") += delta;
  CHECK(notes[0].params.data() == kept);  // the same buffer: no allocation per event
  notes.add("session/update") += std::string(rpc::Notes::kKeptBytes * 2, 'x');
  CHECK(notes.capacity() > rpc::Notes::kKeptBytes);
  notes.clear();
  CHECK(notes.capacity() <= rpc::Notes::kKeptBytes);  // the large buffer was let go
  notes.add("session/update") += delta;
  CHECK(notes[0].params == delta);
}
