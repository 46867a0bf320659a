// The v1/v2 wire helpers written by hand must say exactly what their reflected structs say.
#include <doctest/doctest.h>

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/v2_api.hpp"

using namespace llmx;

TEST_CASE("conversation api: listener params equal the EventNotification encoding") {
  std::vector<Event> events{Event{"3", AgentMessageDeltaEvent{"he\"llo"}}, Event{"4", TaskCompleteEvent{}},
                            Event{"", TurnAbortedEvent{TurnAbortReason::interrupted}}};
  for (const auto& ev : events) {
    std::string params = "[1,";  // written in place after what the buffer holds
    json::Writer w(params);
    api::write_event_notification_params(w, ev, "conv-1");
    CHECK(params == "[1," + json::to_json(api::EventNotification{ev.id, ev.msg, "conv-1"}));
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
