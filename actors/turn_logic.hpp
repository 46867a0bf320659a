// The bookkeeping of one task, free of actors: turns model events into core events and
// history items, tracks the active message items and decides what happens after a response.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/core/model_events.hpp"

namespace llmx {

class TurnLogic {
 public:
  TurnLogic(std::string thread_id, std::string turn_id) : thread_id_(std::move(thread_id)), turn_id_(std::move(turn_id)) {}

  // Events announcing the user's input (item events, user_message) and the item to record.
  ResponseItem user_input(const std::vector<UserInput>& input, std::vector<EventMsg>& out);

  // Consumes streamed model events; appends the core events to emit to `out`. Rate limits from a
  // response's headers are announced at once with a token_count (as the reference does), using
  // `context_window` for its info.
  void on_model_events(std::vector<ModelEvent>& events, std::vector<EventMsg>& out,
                       std::optional<int64_t> context_window = std::nullopt);

  // A request is being retried: forget what the failed attempt streamed.
  void reset_response();

  // Whether the last response has completed, and what it produced.
  bool response_complete() const { return completed_.has_value(); }
  const Completed& completion() const { return *completed_; }
  // Items of the last response in the model's order, and the tool calls among them.
  std::vector<ResponseItem> take_items();
  std::vector<FunctionCallItem> take_calls();

  // The token_count event for the usage so far and the last rate limits the provider reported.
  TokenCountEvent token_count(std::optional<int64_t> context_window) const;

  const std::optional<std::string>& last_agent_message() const { return last_agent_message_; }

 private:
  // Shared with every content delta event (one reference count per delta, no copy).
  SharedString thread_id_, turn_id_;
  std::optional<SharedString> agent_item_id_, reasoning_item_id_;
  std::vector<ResponseItem> items_;
  std::vector<FunctionCallItem> calls_;
  std::optional<Completed> completed_;
  std::optional<TokenUsageInfo> usage_;
  std::optional<RateLimitSnapshot> rate_limits_;
  std::optional<std::string> last_agent_message_;
};

}  // namespace llmx
