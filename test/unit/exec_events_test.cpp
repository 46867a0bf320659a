// `llmx exec --core-events`'s event stream (protocol/rpc/exec_events.hpp): the SDK's contract made from
// core events — thread and turn lines, items started and completed with stable ids, the plan as
// a todo_list, usage at the end, and failures.
#include <doctest/doctest.h>

#include "protocol/rpc/exec_events.hpp"

using namespace llmx;

namespace {

std::vector<std::string> lines_of(exec_events::Translator& t, std::vector<EventMsg> msgs) {
  std::vector<std::string> out;
  for (auto& m : msgs) t.translate(Event{"0", std::move(m)}, out);
  return out;
}

}  // namespace

TEST_CASE("exec events: a turn with a command, a patch and an answer in the SDK's shapes") {
  exec_events::Translator t;
  SessionConfiguredEvent sc;
  sc.session_id = "thread-1";
  std::map<std::string, FileChange> changes{{"/w/a.txt", FileAdd{"hi\n"}}};
  TokenCountEvent tokens;
  TokenUsageInfo info;
  info.total_token_usage.input_tokens = 120;
  info.total_token_usage.cached_input_tokens = 20;
  info.total_token_usage.output_tokens = 7;
  tokens.info = info;
  ExecCommandEndEvent end;
  end.call_id = "c1";
  end.aggregated_output = "hello\n";
  end.exit_code = 0;
  auto lines = lines_of(
      t, {sc, TaskStartedEvent{}, AgentReasoningEvent{"thinking"},
          ExecCommandBeginEvent{"c1", {"bash", "-lc", "echo hello"}, "/w", {}, false}, end,
          PatchApplyBeginEvent{"p1", true, changes}, PatchApplyEndEvent{"p1", "ok", "", true},
          AgentMessageEvent{"Done."}, tokens, TaskCompleteEvent{std::string("Done.")}});
  REQUIRE(lines.size() == 8);
  CHECK(lines[0] == R"({"type":"thread.started","thread_id":"thread-1"})");
  CHECK(lines[1] == R"({"type":"turn.started"})");
  CHECK(lines[2] == R"({"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}})");
  CHECK(lines[3] ==
        R"({"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'echo hello'","aggregated_output":"","exit_code":null,"status":"in_progress"}})");
  CHECK(lines[4] ==
        R"({"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'echo hello'","aggregated_output":"hello\n","exit_code":0,"status":"completed"}})");
  CHECK(lines[5] ==
        R"({"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/a.txt","kind":"add"}],"status":"completed"}})");
  CHECK(lines[6] == R"({"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done."}})");
  CHECK(lines[7] == R"({"type":"turn.completed","usage":{"input_tokens":120,"cached_input_tokens":20,"cache_write_input_tokens":0,"output_tokens":7,"reasoning_output_tokens":0}})");
}

TEST_CASE("exec events: the plan is one todo_list item, MCP calls carry result or error, failures fail the turn") {
  exec_events::Translator t;
  PlanUpdateEvent plan{std::nullopt, {PlanItem{"a", StepStatus::in_progress}}};
  PlanUpdateEvent plan2{std::nullopt, {PlanItem{"a", StepStatus::completed}}};
  McpInvocation inv{"docs", "search", RawJson{R"({"q":"x"})"}};
  auto lines = lines_of(t, {TaskStartedEvent{}, plan, plan2, McpToolCallBeginEvent{"m1", inv},
                            McpToolCallEndEvent{"m1", inv, Duration{}, RawJson{R"({"Err":"boom"})"}},
                            ErrorEvent{"model gave up"}, TaskCompleteEvent{}});
  REQUIRE(lines.size() == 8);
  CHECK(lines[1] == R"({"type":"item.started","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":false}]}})");
  CHECK(lines[2] == R"({"type":"item.updated","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":true}]}})");
  CHECK(lines[3].find(R"("type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":null,"error":null,"status":"in_progress")") !=
        std::string::npos);
  CHECK(lines[4].find(R"("result":null,"error":{"message":"boom"},"status":"failed")") != std::string::npos);
  CHECK(lines[5] == R"({"type":"error","message":"model gave up"})");
  CHECK(lines[6] == R"({"type":"item.completed","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":true}]}})");
  CHECK(lines[7] == R"({"type":"turn.failed","error":{"message":"model gave up"}})");

  auto aborted = lines_of(t, {TaskStartedEvent{}, TurnAbortedEvent{TurnAbortReason::interrupted}});
  CHECK(aborted.back() == R"({"type":"turn.failed","error":{"message":"turn aborted: interrupted"}})");
}
