// Unit tests for the plain code behind the v2 thread operations: a rollback marker in the rollout
// loader (what a resume rebuilds) and in the v2 turn list, the lines a fork copies, the turns and
// title of a stored thread, the loaded-thread page and config/read's layers.
#include <doctest/doctest.h>

#include <string>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/core/history.hpp"
#include "protocol/rpc/v2_config.hpp"
#include "protocol/rpc/v2_history.hpp"
#include "protocol/rpc/v2_threads.hpp"
#include "protocol/store/rollout.hpp"

using namespace llmx;

namespace {

const std::string kTs = "2025-01-02T03:04:05.678Z";

std::string line(const rollout::RolloutItem& item) { return rollout::encode_line(rollout::RolloutLine{kTs, item}) + "\n"; }

std::string meta_line() {
  rollout::SessionMeta m;
  m.id = "0194f1b2-0000-7000-8000-000000000001";
  m.timestamp = kTs;
  m.cwd = "/work";
  return line(m);
}

// One turn as the conversation records it: turn_context, the user's message (item and event), the
// answer (item and event).
std::string turn(const std::string& user, const std::string& answer) {
  rollout::TurnContext tc;
  tc.cwd = "/work";
  tc.model = "m";
  return line(tc) + line(user_message(user)) + line(EventMsg{UserMessageEvent{user, {}}}) +
         line(assistant_message(answer)) + line(EventMsg{AgentMessageEvent{answer}});
}

std::string rolled_back(uint32_t n) { return line(EventMsg{ThreadRolledBackEvent{n}}); }

std::vector<std::string> user_texts(const std::vector<ResponseItem>& history) {
  std::vector<std::string> out;
  for (const auto& item : history)
    if (rollout::is_user_turn_message(item)) out.push_back(item.get_if<MessageItem>()->text());
  return out;
}

std::string item_type(const v2::ThreadItem& item) {
  json::Parser p;
  return std::string(p.parse(item.json.text)["type"].get_string().value());
}

}  // namespace

TEST_CASE("v2 threads: a rollback marker drops the last turns from a resumed history and its events") {
  auto text = meta_line() + turn("one", "1") + turn("two", "2") + turn("three", "3") + rolled_back(2);
  auto loaded = rollout::load(text);
  CHECK(user_texts(loaded.history) == std::vector<std::string>{"one"});
  REQUIRE(loaded.events.size() == 2);
  CHECK(loaded.events[0].get_if<UserMessageEvent>()->message == "one");
  CHECK(loaded.turn_starts.size() == 1);

  // Turns after the marker count again; a marker beyond every turn drops them all.
  auto more = rollout::load(text + turn("four", "4") + rolled_back(1));
  CHECK(user_texts(more.history) == std::vector<std::string>{"one"});
  auto all = rollout::load(text + rolled_back(7));
  CHECK(user_texts(all.history).empty());
  CHECK(all.events.empty());
}

TEST_CASE("v2 threads: a rollback of no turns (a foreign file's) drops nothing") {
  // fuzz_rollout found this one: the events' cut was read one past the end of its table.
  auto none = rollout::load(rolled_back(0));
  CHECK(none.events.empty());
  auto text = meta_line() + turn("one", "1") + turn("two", "2") + rolled_back(0);
  auto loaded = rollout::load(text);
  CHECK(user_texts(loaded.history) == std::vector<std::string>{"one", "two"});
  CHECK(loaded.events.size() == 4);
  CHECK(loaded.turn_starts.size() == 2);
}

TEST_CASE("v2 threads: rollback_cut uses the turn starts, else the first user message") {
  std::vector<ResponseItem> h{assistant_message("context"), user_message("a"), assistant_message("x"),
                              user_message("b"), assistant_message("y")};
  CHECK(rollout::rollback_cut(h, {1, 3}, 1) == 3);
  CHECK(rollout::rollback_cut(h, {1, 3}, 2) == 1);
  CHECK(rollout::rollback_cut(h, {3}, 2) == 1);  // more turns than known: every user turn goes
  CHECK(rollout::rollback_cut(h, {}, 1) == 1);
  CHECK(rollout::rollback_cut(h, {1, 3}, 0) == h.size());
}

TEST_CASE("v2 threads: dropping turns cuts a stored and a live history alike") {
  std::vector<ResponseItem> stored{assistant_message("context"), user_message("a"), assistant_message("x"),
                                   user_message("b"), assistant_message("y")};
  History live;
  live.append(stored);
  History held = live;  // a task's copy: it keeps what it holds
  std::vector<size_t> stored_starts{1, 3}, live_starts{1, 3};
  rollout::drop_last_turns(stored, stored_starts, 1);
  rollout::drop_last_turns(live, live_starts, 1);
  CHECK(stored.size() == 3);
  CHECK(live.size() == 3);
  CHECK(user_texts(live.to_vector()) == user_texts(stored));
  CHECK(stored_starts == std::vector<size_t>{1});
  CHECK(live_starts == stored_starts);
  CHECK(held.size() == 5);
  rollout::drop_last_turns(live, live_starts, 5);  // more than known: back to before the first user turn
  CHECK(live.size() == 1);
  CHECK(live_starts.empty());
}

TEST_CASE("v2 threads: a fork copies every line but the session_meta and the title") {
  auto text = meta_line() + turn("one", "1") +
              line(EventMsg{ThreadNameUpdatedEvent{"0194f1b2-0000-7000-8000-000000000001", std::string("t")}}) +
              "garbage\n" + turn("two", "2") + "{\"cut";
  auto lines = rollout::lines_to_fork(text);
  CHECK(lines.size() == 10);
  for (const auto& l : lines) {
    CHECK(l.find("session_meta") == std::string::npos);
    CHECK(l.find("thread_name_updated") == std::string::npos);
  }
}

TEST_CASE("v2 threads: turns and title of a stored thread") {
  McpInvocation inv;
  inv.server = "fs";
  inv.tool = "read";
  McpToolCallEndEvent end;
  end.call_id = "c1";
  end.invocation = inv;
  end.result = RawJson{R"({"Ok":{"content":[{"type":"text","text":"hi"}]}})"};
  auto text = meta_line() + turn("one", "1") + line(EventMsg{AgentReasoningEvent{"thinking"}}) +
              line(EventMsg{end}) + turn("two", "2") + line(EventMsg{TurnAbortedEvent{}}) +
              line(EventMsg{ThreadNameUpdatedEvent{"x", std::string("first")}}) +
              line(EventMsg{ThreadNameUpdatedEvent{"x", std::string("My title")}});
  auto h = v2::history_of(text);
  REQUIRE(h.turns.size() == 2);
  CHECK(h.name == std::optional<std::string>("My title"));
  CHECK(h.turns[0].id == "turn-1");
  CHECK(h.turns[0].status == v2::TurnStatus::completed);
  REQUIRE(h.turns[0].items.size() == 4);
  CHECK(item_type(h.turns[0].items[0]) == "userMessage");
  CHECK(item_type(h.turns[0].items[1]) == "agentMessage");
  CHECK(item_type(h.turns[0].items[2]) == "reasoning");
  CHECK(item_type(h.turns[0].items[3]) == "mcpToolCall");
  CHECK(h.turns[1].status == v2::TurnStatus::interrupted);
  CHECK(h.turns[1].items[0].json.text.find("\"item-5\"") != std::string::npos);

  // Rolled back: the last turn goes, and the next one keeps counting.
  auto back = v2::history_of(text + rolled_back(1) + turn("three", "3"));
  REQUIRE(back.turns.size() == 2);
  CHECK(back.turns[1].id == "turn-3");
  CHECK(back.turns[1].items[0].json.text.find("three") != std::string::npos);

  // A running thread shows its last turn in progress under its live id.
  auto t = v2::Thread{};
  t.turns = back.turns;
  v2::mark_running(t, "7");
  CHECK(t.status.type == "active");
  CHECK(t.turns.back().id == "7");
  CHECK(t.turns.back().status == v2::TurnStatus::in_progress);
  v2::mark_running(t, "");
  CHECK(t.status.type == "idle");
}

TEST_CASE("v2 threads: the session source in v2 spelling") {
  CHECK(v2::source_of("mcp").text == "\"appServer\"");
  CHECK(v2::source_of("cli").text == "\"cli\"");
  CHECK(v2::source_of(R"({"subagent":"review"})").text == R"({"subagent":"review"})");
  CHECK(v2::source_of("").text == "\"unknown\"");
}

TEST_CASE("v2 threads: loaded thread pages are sorted and follow the cursor") {
  std::vector<std::string> ids{"c", "a", "d", "b"};
  auto all = v2::loaded_page(ids, {}, {});
  CHECK(all.data == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(!all.nextCursor);
  auto first = v2::loaded_page(ids, {}, int64_t{2});
  CHECK(first.data == std::vector<std::string>{"a", "b"});
  REQUIRE(first.nextCursor);
  auto second = v2::loaded_page(ids, *first.nextCursor, int64_t{2});
  CHECK(second.data == std::vector<std::string>{"c", "d"});
  CHECK(!second.nextCursor);
  CHECK(v2::loaded_page(ids, std::string("bb"), int64_t{0}).data == std::vector<std::string>{"c"});  // limit ≥ 1
}

TEST_CASE("v2 threads: config/read shows each leaf's layer") {
  ConfigLayersJson layers;
  layers.user_file = "/h/config.toml";
  layers.user = R"({"model":"a","sandbox_workspace_write":{"writable_roots":["/x","/y"]},"tools":{"web_search":true}})";
  layers.flags = R"({"model":"b"})";
  layers.merged = R"({"model":"b","sandbox_workspace_write":{"writable_roots":["/x","/y"]},"tools":{"web_search":true}})";
  auto r = v2::config_read(layers, true);
  json::Parser p;
  auto config = p.parse(r.config.text);
  CHECK(std::string(config["model"].get_string().value()) == "b");
  CHECK(config["approval_policy"].is_null());
  json::Parser q;
  auto origins = q.parse(r.origins.text);
  CHECK(std::string(origins["model"]["name"]["type"].get_string().value()) == "sessionFlags");
  CHECK(std::string(origins["sandbox_workspace_write.writable_roots.1"]["name"]["type"].get_string().value()) == "user");
  CHECK(std::string(origins["tools.web_search"]["version"].get_string().value()).starts_with("sha256:"));
  REQUIRE(r.layers);
  REQUIRE(r.layers->size() == 2);
  CHECK(r.layers->front().name.text == R"({"type":"sessionFlags"})");
  CHECK(!v2::config_read(layers, false).layers);
}
