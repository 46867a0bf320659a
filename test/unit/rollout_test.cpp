// Unit tests for rollout lines, persistence policy, file paths and loading (engine.md §9;
// DECISIONS P12: garbage lines and a crash-cut last line are skipped and reported).
#include "protocol/store/rollout.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

using namespace llmx;
using namespace llmx::rollout;

namespace {

// 2025-01-02T03:04:05.678Z
std::chrono::system_clock::time_point sample_time() {
  using namespace std::chrono;
  return system_clock::time_point(seconds(1735787045)) + milliseconds(678);
}

const std::string kTs = "2025-01-02T03:04:05.678Z";

std::string line_for(const RolloutItem& item) { return encode_line(RolloutLine{kTs, item}); }

// Sets TZ for the scope of one test and restores it.
struct ScopedTz {
  std::optional<std::string> old;
  explicit ScopedTz(const char* tz) {
    if (const char* o = std::getenv("TZ")) old = o;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTz() {
    if (old)
      setenv("TZ", old->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
};

SessionMeta sample_meta() {
  SessionMeta m;
  m.id = "0194f1b2-0000-7000-8000-000000000001";
  m.timestamp = kTs;
  m.cwd = "/work";
  m.source = JsonOf<SessionSource>{"\"cli\""};
  m.model_provider = "litellm";
  return m;
}

}  // namespace

TEST_CASE("rollout: timestamps are UTC with milliseconds") {
  CHECK(format_timestamp(sample_time()) == kTs);
  CHECK(format_timestamp(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00.000Z");
}

TEST_CASE("rollout: golden session_meta line") {
  SessionMeta m = sample_meta();
  CHECK(line_for(m) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"session_meta","payload":{"id":"0194f1b2-0000-7000-8000-000000000001","timestamp":"2025-01-02T03:04:05.678Z","cwd":"/work","originator":"llmx_cli_rs","cli_version":"0.1.8","instructions":null,"source":"cli","model_provider":"litellm"}})");

  m.instructions = "be nice";
  m.source = JsonOf<SessionSource>{R"({"subagent":"review"})"};
  m.model_provider.reset();
  m.git = GitInfo{"abc123", "main", std::nullopt};
  CHECK(line_for(m) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"session_meta","payload":{"id":"0194f1b2-0000-7000-8000-000000000001","timestamp":"2025-01-02T03:04:05.678Z","cwd":"/work","originator":"llmx_cli_rs","cli_version":"0.1.8","instructions":"be nice","source":{"subagent":"review"},"git":{"commit_hash":"abc123","branch":"main"}}})");
}

TEST_CASE("rollout: golden response_item, event_msg, turn_context, compacted lines") {
  CHECK(line_for(ResponseItem{user_message("hi")}) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}})");
  CHECK(line_for(ResponseItem{FunctionCallItem{"shell", R"({"command":["ls"]})", "call_1"}}) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}})");
  CHECK(line_for(EventMsg{AgentMessageEvent{"done"}}) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"event_msg","payload":{"type":"agent_message","message":"done"}})");
  CHECK(line_for(EventMsg{UserMessageEvent{"hello", {}}}) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"event_msg","payload":{"type":"user_message","message":"hello","images":[]}})");

  TurnContext tc;
  tc.cwd = "/work";
  tc.approval_policy = AskForApproval::on_request;
  tc.sandbox_policy.mode = SandboxMode::read_only;
  tc.model = "gpt-x";
  tc.summary = "auto";
  CHECK(line_for(tc) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"turn_context","payload":{"cwd":"/work","approval_policy":"on-request","sandbox_policy":{"mode":"read-only"},"model":"gpt-x","summary":"auto"}})");
  tc.effort = "high";
  tc.sandbox_policy.mode = SandboxMode::workspace_write;
  CHECK(line_for(tc) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"turn_context","payload":{"cwd":"/work","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write","writable_roots":[],"network_access":false,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false},"model":"gpt-x","effort":"high","summary":"auto"}})");

  CHECK(line_for(Compacted{"sum\nmary"}) ==
        R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"compacted","payload":{"message":"sum\nmary"}})");
}

TEST_CASE("rollout: encode_line with a time point and no raw newline") {
  std::string s = encode_line(sample_time(), Compacted{"a\nb"});
  CHECK(s.find('\n') == std::string::npos);
  CHECK(s.starts_with(R"({"timestamp":"2025-01-02T03:04:05.678Z","type":"compacted")"));
}

TEST_CASE("rollout: every line type round-trips") {
  TurnContext tc;
  tc.cwd = "/w";
  tc.approval_policy = AskForApproval::never;
  tc.sandbox_policy.mode = SandboxMode::workspace_write;
  tc.sandbox_policy.writable_roots = {"/tmp/x"};
  tc.sandbox_policy.network_access = true;
  tc.model = "m";
  tc.effort = "low";
  tc.summary = "concise";
  SessionMeta meta = sample_meta();
  meta.git = GitInfo{"h", std::nullopt, "https://example.com/r.git"};
  meta.instructions = "x";

  std::vector<RolloutItem> items = {
      meta,
      ResponseItem{assistant_message("answer")},
      ResponseItem{FunctionCallOutputItem{"call_1", "ok"}},
      EventMsg{TokenCountEvent{}},
      EventMsg{TurnAbortedEvent{TurnAbortReason::interrupted}},
      tc,
      Compacted{"summary"},
  };
  for (const auto& item : items) {
    std::string s = line_for(item);
    auto back = decode_line(s);
    REQUIRE(back.has_value());
    CHECK(back->timestamp == kTs);
    CHECK(back->type() == item_type(item));
    CHECK(encode_line(*back) == s);
  }

  auto back = decode_line(line_for(meta));
  REQUIRE(back);
  const auto& m = std::get<SessionMeta>(back->item);
  CHECK(m.id == meta.id);
  CHECK(m.source_name() == "cli");
  REQUIRE(m.git);
  CHECK(*m.git == *meta.git);

  auto tcb = decode_line(line_for(tc));
  REQUIRE(tcb);
  const auto& t = std::get<TurnContext>(tcb->item);
  CHECK(t.approval_policy == AskForApproval::never);
  CHECK(t.sandbox_policy.writable_roots == std::vector<std::string>{"/tmp/x"});
  CHECK(t.sandbox_policy.network_access);
  CHECK(t.effort == std::optional<std::string>("low"));
}

TEST_CASE("rollout: decode_line rejects garbage") {
  CHECK_FALSE(decode_line(""));
  CHECK_FALSE(decode_line("not json"));
  CHECK_FALSE(decode_line("[1,2]"));
  CHECK_FALSE(decode_line(R"({"timestamp":"t","type":"compacted"})"));                    // no payload
  CHECK_FALSE(decode_line(R"({"type":"compacted","payload":{"message":"m"}})"));            // no ts
  CHECK_FALSE(decode_line(R"({"timestamp":"t","type":"bogus","payload":{}})"));            // type
  CHECK_FALSE(decode_line(R"({"timestamp":"t","type":"compacted","payload":{}})"));        // field
  CHECK_FALSE(decode_line(R"({"timestamp":"t","type":"event_msg","payload":{"type":"nope"}})"));
  CHECK_FALSE(decode_line(R"({"timestamp":"t","type":"compacted","payload":{"message":"m"})"));
  CHECK(decode_line(R"({"timestamp":"t","type":"compacted","payload":{"message":"m"}})"));
}

TEST_CASE("rollout: event persistence policy") {
  CHECK(should_persist(EventMsg{UserMessageEvent{"u", {}}}));
  CHECK(should_persist(EventMsg{AgentMessageEvent{"a"}}));
  CHECK(should_persist(EventMsg{AgentReasoningEvent{"r"}}));
  CHECK(should_persist(EventMsg{AgentReasoningRawContentEvent{"r"}}));
  CHECK(should_persist(EventMsg{TokenCountEvent{}}));
  CHECK(should_persist(EventMsg{TurnAbortedEvent{TurnAbortReason::interrupted}}));

  CHECK_FALSE(should_persist(EventMsg{ErrorEvent{"e"}}));
  CHECK_FALSE(should_persist(EventMsg{WarningEvent{"w"}}));
  CHECK_FALSE(should_persist(EventMsg{StreamErrorEvent{"s"}}));
  CHECK_FALSE(should_persist(EventMsg{BackgroundEvent{"b"}}));
  CHECK_FALSE(should_persist(EventMsg{TaskStartedEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{TaskCompleteEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{AgentMessageDeltaEvent{"d"}}));
  CHECK_FALSE(should_persist(EventMsg{AgentReasoningDeltaEvent{"d"}}));
  CHECK_FALSE(should_persist(EventMsg{AgentReasoningRawContentDeltaEvent{"d"}}));
  CHECK_FALSE(should_persist(EventMsg{AgentReasoningSectionBreakEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{SessionConfiguredEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ExecCommandBeginEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ExecCommandEndEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ExecApprovalRequestEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ApplyPatchApprovalRequestEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{PatchApplyBeginEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{PatchApplyEndEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{TurnDiffEvent{"d"}}));
  CHECK_FALSE(should_persist(EventMsg{PlanUpdateEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ShutdownCompleteEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{RawResponseItemEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ItemStartedEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{ItemCompletedEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{AgentMessageContentDeltaEvent{}}));
  CHECK_FALSE(should_persist(EventMsg{DeprecationNoticeEvent{}}));
}

TEST_CASE("rollout: response item and line persistence policy") {
  CHECK(should_persist(ResponseItem{user_message("u")}));
  CHECK(should_persist(ResponseItem{ReasoningItem{}}));
  CHECK(should_persist(ResponseItem{FunctionCallItem{}}));
  CHECK(should_persist(ResponseItem{FunctionCallOutputItem{}}));
  CHECK(should_persist(RolloutItem{SessionMeta{}}));
  CHECK(should_persist(RolloutItem{TurnContext{}}));
  CHECK(should_persist(RolloutItem{Compacted{}}));
  CHECK(should_persist(RolloutItem{EventMsg{AgentMessageEvent{"a"}}}));
  CHECK_FALSE(should_persist(RolloutItem{EventMsg{ErrorEvent{"e"}}}));
}

TEST_CASE("rollout: path uses the local date and time") {
  auto t = sample_time();  // 2025-01-02T03:04:05Z
  {
    ScopedTz tz("UTC0");
    CHECK(rollout_path("/h", t, "0194f1b2-0000-7000-8000-000000000001") ==
          "/h/sessions/2025/01/02/rollout-2025-01-02T03-04-05-0194f1b2-0000-7000-8000-000000000001.jsonl");
  }
  {
    // UTC-5: local time is the previous day.
    ScopedTz tz("EST5");
    CHECK(rollout_path("/h", t, "abc") == "/h/sessions/2025/01/01/rollout-2025-01-01T22-04-05-abc.jsonl");
  }
}

TEST_CASE("rollout: load rebuilds meta, history and events") {
  std::string file;
  file += line_for(sample_meta()) + "\n";
  SessionMeta second = sample_meta();
  second.id = "other";
  file += line_for(second) + "\n";  // the first meta wins
  file += line_for(ResponseItem{user_message("q1")}) + "\n";
  file += line_for(EventMsg{UserMessageEvent{"q1", {}}}) + "\n";
  file += line_for(EventMsg{TaskStartedEvent{}}) + "\n";  // not persisted: dropped on load
  file += line_for(ResponseItem{assistant_message("a1")}) + "\n";
  file += line_for(EventMsg{AgentMessageEvent{"a1"}}) + "\n";

  LoadedRollout r = load(file);
  REQUIRE(r.meta);
  CHECK(r.meta->id == sample_meta().id);
  REQUIRE(r.history.size() == 2);
  CHECK(r.history[0].get_if<MessageItem>()->text() == "q1");
  CHECK(r.history[1].get_if<MessageItem>()->role == "assistant");
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].is<UserMessageEvent>());
  CHECK(r.events[1].is<AgentMessageEvent>());
  CHECK(r.bad_lines == 0);
  CHECK_FALSE(r.truncated_last_line);
  CHECK(r.warnings.empty());

  CHECK_FALSE(load("").meta);
}

TEST_CASE("rollout: load skips and reports garbage lines") {
  std::string file;
  file += line_for(sample_meta()) + "\n";
  file += "\n";          // blank: skipped silently
  file += "garbage\n";   // bad
  file += line_for(ResponseItem{user_message("q1")}) + "\n";
  file += R"({"timestamp":"t","type":"unknown_kind","payload":{}})" "\n";  // bad
  file += line_for(ResponseItem{assistant_message("a1")}) + "\r\n";        // CRLF tolerated

  LoadedRollout r = load(file);
  REQUIRE(r.meta);
  CHECK(r.history.size() == 2);
  CHECK(r.bad_lines == 2);
  CHECK_FALSE(r.truncated_last_line);
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].find("line 3") != std::string::npos);
  CHECK(r.warnings[1].find("line 5") != std::string::npos);
}

TEST_CASE("rollout: a truncated last line is ignored and reported") {
  std::string full = line_for(ResponseItem{assistant_message("a1")});
  std::string file = line_for(sample_meta()) + "\n" + line_for(ResponseItem{user_message("q1")}) +
                     "\n" + full.substr(0, full.size() / 2);
  LoadedRollout r = load(file);
  REQUIRE(r.meta);
  CHECK(r.history.size() == 1);
  CHECK(r.truncated_last_line);
  CHECK(r.bad_lines == 0);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("partial") != std::string::npos);

  // A complete last line without its newline still counts.
  LoadedRollout r2 = load(line_for(sample_meta()) + "\n" + full);
  CHECK_FALSE(r2.truncated_last_line);
  CHECK(r2.history.size() == 1);

  // The same cut text in the middle of the file is a bad line, not a truncated one.
  LoadedRollout r3 = load(full.substr(0, 10) + "\n" + full + "\n");
  CHECK_FALSE(r3.truncated_last_line);
  CHECK(r3.bad_lines == 1);
  CHECK(r3.history.size() == 1);
}

TEST_CASE("rollout: a compacted line replaces the history") {
  std::vector<ResponseItem> initial = {developer_message("dev"),
                                       user_message("<environment_context>x</environment_context>")};
  std::string file;
  file += line_for(sample_meta()) + "\n";
  file += line_for(ResponseItem{user_message("<user_instructions>ui</user_instructions>")}) + "\n";
  file += line_for(ResponseItem{user_message("  <ENVIRONMENT_CONTEXT>old</ENVIRONMENT_CONTEXT>")}) + "\n";
  file += line_for(ResponseItem{user_message("q1")}) + "\n";
  file += line_for(ResponseItem{assistant_message("a1")}) + "\n";
  file += line_for(ResponseItem{FunctionCallItem{"shell", "{}", "c1"}}) + "\n";
  file += line_for(ResponseItem{user_message("q2")}) + "\n";
  file += line_for(Compacted{"the summary"}) + "\n";
  file += line_for(ResponseItem{assistant_message("after")}) + "\n";

  LoadedRollout r = load(file, initial);
  REQUIRE(r.history.size() == 6);
  CHECK(r.history[0].get_if<MessageItem>()->role == "developer");
  CHECK(r.history[1].get_if<MessageItem>()->text() == "<environment_context>x</environment_context>");
  CHECK(r.history[2].get_if<MessageItem>()->text() == "q1");
  CHECK(r.history[3].get_if<MessageItem>()->text() == "q2");
  CHECK(r.history[4].get_if<MessageItem>()->role == "user");
  CHECK(r.history[4].get_if<MessageItem>()->text() == "the summary");
  CHECK(r.history[5].get_if<MessageItem>()->role == "assistant");

  // An empty summary becomes the placeholder.
  LoadedRollout r2 = load(line_for(Compacted{""}) + "\n");
  REQUIRE(r2.history.size() == 1);
  CHECK(r2.history[0].get_if<MessageItem>()->text() == "(no summary available)");
}

TEST_CASE("rollout: compaction keeps the newest user messages within 80000 bytes") {
  std::string big(50000, 'a');
  std::string big2(50000, 'b');
  auto h = build_compacted_history({}, {"old", big, big2}, "s");
  REQUIRE(h.size() == 3);  // truncated big + big2 + summary; "old" dropped
  std::string first = h[0].get_if<MessageItem>()->text();
  CHECK(first.size() <= 30000);
  CHECK(first.find("tokens truncated") != std::string::npos);
  CHECK(first.front() == 'a');
  CHECK(h[1].get_if<MessageItem>()->text() == big2);
  CHECK(h[2].get_if<MessageItem>()->text() == "s");

  auto small = build_compacted_history({}, {"x", "y"}, "s");
  REQUIRE(small.size() == 3);
  CHECK(small[0].get_if<MessageItem>()->text() == "x");
  CHECK(small[1].get_if<MessageItem>()->text() == "y");
}

TEST_CASE("rollout: a smaller user budget keeps fewer user messages, live and when a rollout is replayed") {
  auto h = build_compacted_history({}, {"aaaa", "bbbb", "cccc"}, "s", 8);
  REQUIRE(h.size() == 3);  // the two newest fit 8 bytes; "aaaa" does not
  CHECK(h[0].get_if<MessageItem>()->text() == "bbbb");
  CHECK(h[1].get_if<MessageItem>()->text() == "cccc");

  std::string file = line_for(sample_meta()) + "\n";
  for (const char* q : {"aaaa", "bbbb", "cccc"}) file += line_for(ResponseItem{user_message(q)}) + "\n";
  file += line_for(Compacted{"sum"}) + "\n";
  CHECK(load(file, {}).history.size() == 4);  // the reference's budget keeps all three
  CHECK(load(file, {}).compactions == 1);
  auto r = load(file, {}, 8);
  REQUIRE(r.history.size() == 3);
  CHECK(r.history[0].get_if<MessageItem>()->text() == "bbbb");
}
