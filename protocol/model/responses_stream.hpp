// Turns Responses API stream events into ModelEvents (engine.md §3.5): text and reasoning-summary
// deltas as they arrive, each finished output item (message, reasoning with its encrypted
// content, function call) from `response.output_item.done`, and completion with usage at
// `response.completed` (or `response.incomplete`, whose reason becomes the finish reason).
// `response.failed` and `error` events end the stream: the context window, quota and invalid
// requests are fatal, anything else (rate limits, server errors) is worth retrying, with the
// delay the message names ("try again in 1.5s").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "protocol/core/model_events.hpp"

namespace llmx {

class ResponsesStreamParser {
 public:
  enum class Status { more, done, error };

  // One SSE event: its data (JSON with a `type`; the `event:` line is not needed).
  Status on_data(std::string_view data, std::vector<ModelEvent>& out);
  // The byte stream ended; error unless the response completed.
  Status on_end(std::vector<ModelEvent>& out);

  const std::string& error_message() const { return error_; }
  bool error_retryable() const { return error_retryable_; }
  std::optional<int64_t> retry_after_ms() const { return retry_after_ms_; }

 private:
  void fail(json::Object error);
  void finish(json::Object response, std::string finish_reason, std::vector<ModelEvent>& out);

  json::Parser parser_;
  bool done_ = false;
  std::string error_;
  bool error_retryable_ = false;
  std::optional<int64_t> retry_after_ms_;
};

// A finished output item as a history item; nullopt for kinds llmx does not keep
// (web_search_call, custom_tool_call...). Exposed for tests.
std::optional<ResponseItem> response_item_from_json(json::Object item);

// "Please try again in 1.5s" / "in 20ms" / "in 3 seconds" → milliseconds.
std::optional<int64_t> try_again_delay_ms(std::string_view message);

}  // namespace llmx
