// Unit tests for TurnLogic, the actor-free bookkeeping of a task: model events in, core events
// and history items out (engine.md §1.6, §1.11, §1.13; DECISIONS E3).
#include "actors/turn_logic.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"

using namespace llmx;

namespace {

std::vector<std::string> kinds(const std::vector<EventMsg>& evs) {
  std::vector<std::string> out;
  for (const auto& e : evs) out.emplace_back(e.kind());
  return out;
}

// Feeds the events and returns what TurnLogic emitted for them.
std::vector<EventMsg> feed(TurnLogic& t, std::vector<ModelEvent> events) {
  std::vector<EventMsg> out;
  t.on_model_events(events, out);
  return out;
}

template <class T>
const T& as(const EventMsg& e) {
  auto* p = e.get_if<T>();
  REQUIRE_MESSAGE(p, "event is " << std::string(e.kind()));
  return *p;
}

TokenUsage usage(int64_t in, int64_t cached, int64_t out, int64_t reasoning, int64_t total) {
  TokenUsage u;
  u.input_tokens = in;
  u.cached_input_tokens = cached;
  u.output_tokens = out;
  u.reasoning_output_tokens = reasoning;
  u.total_tokens = total;
  return u;
}

}  // namespace

TEST_CASE("turn logic: text deltas start the agent message item once, then stream content deltas") {
  TurnLogic t("thread-1", "turn-1");
  auto out = feed(t, {TextDelta{"Hel"}, TextDelta{"lo"}});
  CHECK(kinds(out) == std::vector<std::string>{"item_started", "agent_message_content_delta", "agent_message_delta",
                                               "agent_message_content_delta", "agent_message_delta"});
  const auto& started = as<ItemStartedEvent>(out[0]);
  CHECK(started.thread_id == "thread-1");
  CHECK(started.turn_id == "turn-1");
  auto* item = started.item.get_if<AgentMessageTurnItem>();
  REQUIRE(item);
  CHECK_FALSE(item->id.empty());
  CHECK(item->content.empty());
  const auto& d1 = as<AgentMessageContentDeltaEvent>(out[1]);
  CHECK(d1.item_id == item->id);
  CHECK(d1.thread_id == "thread-1");
  CHECK(d1.turn_id == "turn-1");
  CHECK(d1.delta == "Hel");
  CHECK(as<AgentMessageDeltaEvent>(out[2]).delta == "Hel");
  CHECK(as<AgentMessageContentDeltaEvent>(out[3]).item_id == item->id);
  CHECK(as<AgentMessageContentDeltaEvent>(out[3]).delta == "lo");
  CHECK(as<AgentMessageDeltaEvent>(out[4]).delta == "lo");
  // The deltas share the ids rather than copy them: no allocation per delta.
  CHECK(as<AgentMessageContentDeltaEvent>(out[3]).item_id.str().data() == d1.item_id.str().data());
  CHECK(as<AgentMessageContentDeltaEvent>(out[3]).thread_id.str().data() == d1.thread_id.str().data());

  // A later batch continues the same item: no second item_started.
  auto more = feed(t, {TextDelta{"!"}});
  CHECK(kinds(more) == std::vector<std::string>{"agent_message_content_delta", "agent_message_delta"});
  CHECK(as<AgentMessageContentDeltaEvent>(more[0]).item_id == item->id);
}

TEST_CASE("turn logic: the finished message completes the item and becomes the agent message") {
  TurnLogic t("th", "tu");
  auto out = feed(t, {TextDelta{"Hi "}, TextDelta{"there"}, ItemDone{assistant_message("Hi there")}});
  REQUIRE(kinds(out) == std::vector<std::string>{"item_started", "agent_message_content_delta",
                                                 "agent_message_delta", "agent_message_content_delta",
                                                 "agent_message_delta", "item_completed", "agent_message"});
  auto id = as<ItemStartedEvent>(out[0]).item.get_if<AgentMessageTurnItem>()->id;
  const auto& done = as<ItemCompletedEvent>(out[5]);
  auto* item = done.item.get_if<AgentMessageTurnItem>();
  REQUIRE(item);
  CHECK(item->id == id);
  REQUIRE(item->content.size() == 1);
  CHECK(item->content[0].get_if<AgentText>()->text == "Hi there");
  CHECK(as<AgentMessageEvent>(out[6]).message == "Hi there");
  CHECK(t.last_agent_message() == std::optional<std::string>("Hi there"));
}

TEST_CASE("turn logic: a message without deltas is started and completed with the same id") {
  TurnLogic t("th", "tu");
  CHECK_FALSE(t.last_agent_message().has_value());
  auto out = feed(t, {ItemDone{assistant_message("whole")}});
  REQUIRE(kinds(out) == std::vector<std::string>{"item_started", "item_completed", "agent_message"});
  auto started = as<ItemStartedEvent>(out[0]).item.get_if<AgentMessageTurnItem>();
  auto completed = as<ItemCompletedEvent>(out[1]).item.get_if<AgentMessageTurnItem>();
  REQUIRE(started);
  REQUIRE(completed);
  CHECK(started->id == completed->id);
  CHECK(t.last_agent_message() == std::optional<std::string>("whole"));
}

TEST_CASE("turn logic: reasoning deltas and the reasoning item") {
  TurnLogic t("th", "tu");
  ReasoningItem r{{}, std::vector<ReasoningContent>{ReasoningText{"think"}}, {}};
  auto out = feed(t, {ReasoningDelta{"thi"}, ReasoningDelta{"nk"}, ItemDone{r}});
  REQUIRE(kinds(out) == std::vector<std::string>{"item_started", "reasoning_content_delta", "agent_reasoning_delta",
                                                 "reasoning_content_delta", "agent_reasoning_delta",
                                                 "item_completed", "agent_reasoning"});
  auto id = as<ItemStartedEvent>(out[0]).item.get_if<ReasoningTurnItem>()->id;
  CHECK(as<ReasoningContentDeltaEvent>(out[1]).item_id == id);
  CHECK(as<AgentReasoningDeltaEvent>(out[2]).delta == "thi");
  auto* done = as<ItemCompletedEvent>(out[5]).item.get_if<ReasoningTurnItem>();
  REQUIRE(done);
  CHECK(done->id == id);
  CHECK(as<AgentReasoningEvent>(out[6]).text == "think");
  CHECK_FALSE(t.last_agent_message().has_value());  // reasoning is not an agent message
}

TEST_CASE("turn logic: function calls are collected in order, items keep the model's order") {
  TurnLogic t("th", "tu");
  FunctionCallItem a{"shell", R"({"command":["ls"]})", "call_a"};
  FunctionCallItem b{"read_file", R"({"path":"x"})", "call_b"};
  auto out = feed(t, {TextDelta{"Looking."}, ItemDone{assistant_message("Looking.")}, ItemDone{a}, ItemDone{b},
                      Completed{std::nullopt, "tool_calls"}});
  // Calls produce no core events by themselves.
  CHECK(kinds(out) == std::vector<std::string>{"item_started", "agent_message_content_delta", "agent_message_delta",
                                               "item_completed", "agent_message"});
  CHECK(t.response_complete());
  CHECK(t.completion().finish_reason == "tool_calls");
  auto items = t.take_items();
  CHECK(json::to_json(items) == json::to_json(std::vector<ResponseItem>{assistant_message("Looking."), a, b}));
  auto calls = t.take_calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].call_id == "call_a");
  CHECK(calls[0].name == "shell");
  CHECK(calls[0].arguments == R"({"command":["ls"]})");
  CHECK(calls[1].call_id == "call_b");
  // Taking empties them.
  CHECK(t.take_items().empty());
  CHECK(t.take_calls().empty());
  CHECK_FALSE(t.response_complete());
}

TEST_CASE("turn logic: usage accumulates across responses") {
  TurnLogic t("th", "tu");
  CHECK_FALSE(t.token_count(std::nullopt).info.has_value());  // no usage yet: info is null

  feed(t, {ItemDone{FunctionCallItem{"shell", "{}", "c1"}}, Completed{usage(100, 20, 10, 4, 110), "tool_calls"}});
  REQUIRE(t.response_complete());
  auto first = t.token_count(200000);
  REQUIRE(first.info.has_value());
  CHECK(json::to_json(first.info->total_token_usage) == json::to_json(usage(100, 20, 10, 4, 110)));
  CHECK(json::to_json(first.info->last_token_usage) == json::to_json(usage(100, 20, 10, 4, 110)));
  REQUIRE(first.info->model_context_window.has_value());
  CHECK(*first.info->model_context_window == 200000);
  t.take_items();
  t.take_calls();

  // Second response of the same task.
  feed(t, {TextDelta{"done"}, ItemDone{assistant_message("done")}, Completed{usage(150, 100, 5, 0, 155), "stop"}});
  auto second = t.token_count(200000);
  REQUIRE(second.info.has_value());
  CHECK(json::to_json(second.info->total_token_usage) == json::to_json(usage(250, 120, 15, 4, 265)));
  CHECK(json::to_json(second.info->last_token_usage) == json::to_json(usage(150, 100, 5, 0, 155)));
  CHECK(json::to_json(second) ==
        R"({"info":{"total_token_usage":{"input_tokens":250,"cached_input_tokens":120,"output_tokens":15,"reasoning_output_tokens":4,"total_tokens":265},"last_token_usage":{"input_tokens":150,"cached_input_tokens":100,"output_tokens":5,"reasoning_output_tokens":0,"total_tokens":155},"model_context_window":200000},"rate_limits":null})");

  // A response without usage leaves the totals alone.
  t.take_items();
  t.take_calls();
  feed(t, {Completed{std::nullopt, "stop"}});
  auto third = t.token_count(std::nullopt);
  REQUIRE(third.info.has_value());
  CHECK(json::to_json(third.info->total_token_usage) == json::to_json(usage(250, 120, 15, 4, 265)));
  CHECK_FALSE(third.info->model_context_window.has_value());
}

TEST_CASE("turn logic: rate limits from the headers are announced at once and ride on later token counts") {
  TurnLogic t("th", "tu");
  RateLimitSnapshot snap{RateLimitWindow{75.0, std::nullopt, 1735689720}, std::nullopt};
  std::vector<ModelEvent> events{RateLimits{snap}, TextDelta{"hi"}};
  std::vector<EventMsg> out;
  t.on_model_events(events, out, 128000);
  REQUIRE(out.size() >= 1);
  auto& announced = as<TokenCountEvent>(out[0]);
  REQUIRE(announced.rate_limits);
  CHECK(announced.rate_limits->primary->used_percent == doctest::Approx(75.0));
  CHECK_FALSE(announced.info);  // no usage yet
  feed(t, {ItemDone{assistant_message("hi")}, Completed{usage(10, 0, 2, 0, 12), "stop"}});
  auto after = t.token_count(128000);
  REQUIRE(after.rate_limits);
  REQUIRE(after.info);
  CHECK(*after.rate_limits->primary->resets_at == 1735689720);
}

TEST_CASE("turn logic: each response's message gets its own item") {
  TurnLogic t("th", "tu");
  auto first = feed(t, {TextDelta{"one"}, ItemDone{assistant_message("one")}, Completed{std::nullopt, "stop"}});
  auto id1 = as<ItemStartedEvent>(first[0]).item.get_if<AgentMessageTurnItem>()->id;
  t.take_items();
  t.take_calls();
  auto second = feed(t, {TextDelta{"two"}, ItemDone{assistant_message("two")}, Completed{std::nullopt, "stop"}});
  REQUIRE(kinds(second).front() == "item_started");
  auto id2 = as<ItemStartedEvent>(second[0]).item.get_if<AgentMessageTurnItem>()->id;
  CHECK(id1 != id2);
  CHECK(t.last_agent_message() == std::optional<std::string>("two"));
}

TEST_CASE("turn logic: reset_response forgets what a failed attempt streamed") {
  TurnLogic t("th", "tu");
  auto out = feed(t, {TextDelta{"par"}, ReasoningDelta{"r"}, ItemDone{FunctionCallItem{"shell", "{}", "c1"}},
                      Completed{std::nullopt, "stop"}});
  auto old_id = as<ItemStartedEvent>(out[0]).item.get_if<AgentMessageTurnItem>()->id;
  REQUIRE(t.response_complete());

  t.reset_response();
  CHECK_FALSE(t.response_complete());
  CHECK(t.take_items().empty());
  CHECK(t.take_calls().empty());

  // The retry streams again: a fresh item is started (the old partial one is abandoned).
  auto again = feed(t, {TextDelta{"full"}, ReasoningDelta{"r"}, ItemDone{assistant_message("full")},
                        Completed{std::nullopt, "stop"}});
  REQUIRE(kinds(again)[0] == "item_started");
  auto new_id = as<ItemStartedEvent>(again[0]).item.get_if<AgentMessageTurnItem>()->id;
  CHECK(new_id != old_id);
  CHECK(kinds(again)[3] == "item_started");  // reasoning item restarted too
  CHECK(as<ItemStartedEvent>(again[3]).item.is<ReasoningTurnItem>());
  auto items = t.take_items();
  CHECK(json::to_json(items) == json::to_json(std::vector<ResponseItem>{assistant_message("full")}));
  CHECK(t.take_calls().empty());
}

TEST_CASE("turn logic: user input becomes item events, a user_message and a history item") {
  TurnLogic t("th", "tu");
  std::vector<EventMsg> out;
  auto item = t.user_input({TextInput{"look at "}, ImageInput{"data:image/png;base64,AA=="}, TextInput{"this"}}, out);
  REQUIRE(kinds(out) == std::vector<std::string>{"item_started", "item_completed", "user_message"});
  auto* started = as<ItemStartedEvent>(out[0]).item.get_if<UserMessageTurnItem>();
  auto* completed = as<ItemCompletedEvent>(out[1]).item.get_if<UserMessageTurnItem>();
  REQUIRE(started);
  REQUIRE(completed);
  CHECK(started->id == completed->id);
  CHECK(completed->content.size() == 3);
  const auto& um = as<UserMessageEvent>(out[2]);
  CHECK(um.message == "look at this");
  CHECK(um.images == std::vector<std::string>{"data:image/png;base64,AA=="});
  CHECK(json::to_json(item) ==
        R"({"type":"message","role":"user","content":[{"type":"input_text","text":"look at "},{"type":"input_image","image_url":"data:image/png;base64,AA=="},{"type":"input_text","text":"this"}]})");
}
