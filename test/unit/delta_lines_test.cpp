// Unit tests for DeltaLines (protocol/rpc/delta_lines.hpp): the lines of streamed deltas written
// from kept prefixes are byte for byte the ordinary ones, and the ordinary writer runs only to
// make them (twice per item and kind of delta).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/rpc/delta_lines.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/mcp.hpp"

using namespace llmx;

namespace {

// The MCP server's llmx/event line, as the session writes it without DeltaLines.
struct OrdinaryLine {
  int* calls;
  rpc::Id request_id;
  void operator()(std::string& out, const Event& ev) const {
    ++*calls;
    rpc::Encoder{true}.notification(out, "llmx/event",
                                    [&](json::Writer& w) { mcp::write_event_params(w, request_id, ev); });
  }
};

std::string ordinary(const rpc::Id& id, const Event& ev) {
  int calls = 0;
  std::string out;
  OrdinaryLine{&calls, id}(out, ev);
  return out;
}

Event content(std::string event_id, SharedString thread, SharedString turn, SharedString item, std::string delta) {
  AgentMessageContentDeltaEvent m;
  m.thread_id = std::move(thread);
  m.turn_id = std::move(turn);
  m.item_id = std::move(item);
  m.delta = std::move(delta);
  return Event{std::move(event_id), EventMsg{std::move(m)}};
}

Event legacy(std::string event_id, std::string delta) {
  return Event{std::move(event_id), EventMsg{AgentMessageDeltaEvent{std::move(delta)}}};
}

}  // namespace

TEST_CASE("delta lines: every line is the ordinary one, and the ordinary writer runs twice per item and kind") {
  SharedString thread("01a237ca-accc-7837-9415-304160646fa8"), turn("1");
  SharedString item_a("3091d62f-3f82-4424-bd55-c8da5fc337ca"), item_b("7c1f0e9a-0000-4000-8000-000000000002");
  const rpc::Id call{"7"};
  std::vector<Event> events;
  for (std::string text : {"tok0 ", "quote \" and \\ slash", "line\nbreak\ttab\x01", "Жук ✓", "bad \xC3( utf-8", ""}) {
    events.push_back(content("1", thread, turn, item_a, text));
    events.push_back(legacy("1", text));
  }
  events.push_back(Event{"1", EventMsg{AgentMessageEvent{"the whole message"}}});  // not a delta
  events.push_back(content("1", thread, turn, SharedString(std::string(item_a.str())), "same id, other buffer"));
  events.push_back(content("1", thread, turn, item_b, "next item"));
  ReasoningContentDeltaEvent reasoning;
  reasoning.thread_id = thread;
  reasoning.turn_id = turn;
  reasoning.item_id = item_a;
  reasoning.delta = "thinking";
  events.push_back(Event{"1", EventMsg{reasoning}});
  events.push_back(Event{"1", EventMsg{AgentReasoningDeltaEvent{"thinking"}}});

  rpc::DeltaLines lines;
  int calls = 0;
  std::string out;
  for (const auto& ev : events) {
    const size_t at = out.size();
    lines.append(out, call.json, ev, OrdinaryLine{&calls, call});
    CHECK(out.substr(at) == ordinary(call, ev));
  }
  // Twice for each of item A's content and legacy deltas, item B, the reasoning content and its
  // legacy twin, and once for the whole message (item A's id in another buffer is still item A).
  CHECK(calls == 11);
}

TEST_CASE("delta lines: another call, event id, thread or turn gets its own prefix") {
  SharedString thread("t-1"), turn("turn-1"), item("item-1");
  const rpc::Id first{"1"}, second{R"("two")"};
  rpc::DeltaLines lines;
  int calls = 0;
  std::string out;
  auto check = [&](const rpc::Id& id, const Event& ev) {
    const size_t at = out.size();
    lines.append(out, id.json, ev, OrdinaryLine{&calls, id});
    CHECK(out.substr(at) == ordinary(id, ev));
  };
  check(first, content("1", thread, turn, item, "a"));
  check(second, content("1", thread, turn, item, "b"));          // another call
  check(first, content("2", thread, turn, item, "c"));           // another submission
  check(first, content("1", SharedString("t-2"), turn, item, "d"));  // another thread
  check(first, content("1", thread, SharedString("turn-2"), item, "e"));  // another turn
  CHECK(calls == 10);
  check(first, content("1", thread, turn, item, "f"));  // a call keeps the item it streams last
  CHECK(calls == 12);
  check(first, content("1", thread, turn, item, "g"));
  CHECK(calls == 12);
  CHECK(rpc::DeltaLines::delta_of(legacy("1", "x")) == "x");
  CHECK_FALSE(rpc::DeltaLines::delta_of(Event{"1", EventMsg{AgentMessageEvent{"x"}}}));
}

TEST_CASE("delta lines: a hundred calls streaming at once each keep their prefixes") {
  SharedString thread("t"), turn("1");
  std::vector<SharedString> items;
  for (int i = 0; i < 100; ++i) items.emplace_back("item-" + std::to_string(i));
  rpc::DeltaLines lines;
  int calls = 0;
  std::string out, expected;
  for (int round = 0; round < 5; ++round)
    for (int i = 0; i < 100; ++i) {  // one delta of each call in turn, as the 100-stream bench row sends them
      const rpc::Id id = rpc::Id::from_int(i);
      for (const Event& ev : {content("1", thread, turn, items[i], "tok"), legacy("1", "tok")}) {
        lines.append(out, id.json, ev, OrdinaryLine{&calls, id});
        expected += ordinary(id, ev);
      }
    }
  CHECK(out == expected);
  CHECK(calls == 100 * 2 * 2);  // made once per call and kind, then reused in every round
}

TEST_CASE("delta lines: past the kept limit the entries are made again, and every line stays whole") {
  // 1,100 calls: the kept entries (and the recently used ones looked at first) are dropped when
  // the limit is reached, and the calls of before are written right when they stream again.
  SharedString thread("t"), turn("1"), item("i");
  rpc::DeltaLines lines;
  int calls = 0;
  std::string out, expected;
  for (int i : {0, 1, 2}) {
    for (int call = 0; call < 1100; ++call) {
      const rpc::Id id = rpc::Id::from_int(call);
      const std::string delta = fmt::format("d{}", i);
      const Event ev = call % 2 ? legacy("1", delta) : content("1", thread, turn, item, delta);
      lines.append(out, id.json, ev, OrdinaryLine{&calls, id});
      expected += ordinary(id, ev);
    }
  }
  CHECK(out == expected);
  CHECK(calls > 1100 * 2);  // the first calls' entries were made again after the drop
}

TEST_CASE("delta lines: members after the delta are kept too (the v1 listener line)") {
  rpc::DeltaLines lines;
  int calls = 0;
  auto listener_line = [&](std::string& out, const Event& ev) {
    ++calls;
    api::append_event_notification(rpc::Encoder{false}, out, ev, "conv-1");
  };
  std::string out, expected;
  for (std::string text : {"a", "b \"quoted\"", ""}) {
    lines.append(out, "conv-1", legacy("1", text), listener_line);
    api::append_event_notification(rpc::Encoder{false}, expected, legacy("1", text), "conv-1");
  }
  CHECK(out == expected);
  CHECK(out.find(R"("conversationId":"conv-1")") != std::string::npos);
  CHECK(calls == 2);
}

TEST_CASE("delta lines: a writer that puts the delta in twice is used for every line") {
  rpc::DeltaLines lines;
  int calls = 0;
  auto twice = [&](std::string& out, const Event& ev) {
    ++calls;
    out += R"({"delta":)";
    json::append_escaped(out, *rpc::DeltaLines::delta_of(ev));
    out += R"(,"again":)";
    json::append_escaped(out, *rpc::DeltaLines::delta_of(ev));
    out += "}";
  };
  std::string out;
  lines.append(out, "", legacy("1", "a"), twice);
  lines.append(out, "", legacy("1", "b"), twice);
  CHECK(out == R"({"delta":"a","again":"a"}{"delta":"b","again":"b"})");
  CHECK(calls == 4);  // the two probes, then each line whole
}

TEST_CASE("delta lines: a writer whose probes differ in more than the value is used for every line") {
  rpc::DeltaLines lines;
  int calls = 0;
  auto drops_text = [&](std::string& out, const Event& ev) {  // the probe with text is the shorter
    ++calls;
    out += rpc::DeltaLines::delta_of(ev)->empty() ? R"({"delta":"","empty":true})" : "{}";
  };
  auto counts_bytes = [&](std::string& out, const Event& ev) {  // the same length, another byte
    ++calls;
    out += fmt::format(R"({{"size":{}}})", rpc::DeltaLines::delta_of(ev)->size());
  };
  std::string out;
  lines.append(out, "a", legacy("1", "text"), drops_text);
  lines.append(out, "b", legacy("1", "text"), counts_bytes);
  CHECK(out == R"({}{"size":4})");
  CHECK(calls == 6);  // two probes and the line itself, for each
}
