// The v1/v2 wire helpers written by hand must say exactly what their reflected structs say.
#include <doctest/doctest.h>

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/v2_api.hpp"

using namespace llmx;

TEST_CASE("conversation api: a listener's notification is llmx/event/<type> with the EventNotification params") {
  std::vector<Event> events{Event{"3", AgentMessageDeltaEvent{"he\"llo"}}, Event{"4", TaskCompleteEvent{}},
                            Event{"", TurnAbortedEvent{TurnAbortReason::interrupted}}};
  for (const auto& ev : events) {
    std::string lines = "earlier\n";  // written in place after what the batch holds
    api::append_event_notification(rpc::Encoder{false}, lines, ev, "conv-1");
    REQUIRE(lines.starts_with("earlier\n"));
    json::Parser p;
    auto line = p.parse(std::string_view(lines).substr(8));
    CHECK(json::to_text(line.at_pointer("/method").value_unsafe()) == "\"llmx/event/" + std::string(ev.msg.kind()) + "\"");
    CHECK(json::to_text(line.at_pointer("/params").value_unsafe()) ==
          json::to_json(api::EventNotification{ev.id, ev.msg, "conv-1"}));
  }
}

TEST_CASE("conversation api: model/list answers items (MCP) or data (app server) with nextCursor") {
  auto page = models::list_models("my-model", std::nullopt, 1);
  auto mcp = api::model_list_result(page.items, page.next_cursor, false);
  auto app = api::model_list_result(page.items, page.next_cursor, true);
  CHECK(mcp.starts_with(R"({"items":[{"id":"my-model")"));
  CHECK(app.starts_with(R"({"data":[{"id":"my-model")"));
  CHECK(app.ends_with(R"(,"nextCursor":"1"})"));
  auto last = models::list_models("my-model", std::string("1"), 100);
  CHECK(api::model_list_result(last.items, last.next_cursor, true).ends_with(R"(,"nextCursor":null})"));
}

TEST_CASE("v2: a resumed thread's preview is the first recorded user message, with the marker rule") {
  std::vector<EventMsg> events{EventMsg{TaskStartedEvent{}}, EventMsg{UserMessageEvent{"ctx\n## My request for LLMX:\n  fix it ", {}}},
                               EventMsg{UserMessageEvent{"second", {}}}};
  CHECK(v2::preview_from_initial_messages(JsonOf<RecordedEvents>{json::to_json(events)}) == "fix it");
  CHECK(v2::preview_from_initial_messages(std::nullopt) == "");
  CHECK(v2::preview_from_initial_messages(JsonOf<RecordedEvents>{"[]"}) == "");
  CHECK(v2::preview_from_initial_messages(JsonOf<RecordedEvents>{"[{\"type\":\"bogus\"}]"}) == "");
}
