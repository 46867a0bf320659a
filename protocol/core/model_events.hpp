// What a model stream yields, whatever the wire (Chat Completions or Responses): text and
// reasoning deltas as they arrive, finished items in the model's order, then completion.
#pragma once

#include "protocol/core/events.hpp"

namespace llmx {

LLMX_TAGGED_STRING(TextDelta, "text_delta", text)
LLMX_TAGGED_STRING(ReasoningDelta, "reasoning_delta", text)

// A finished item: assistant message, reasoning, or one function call (one per streamed index).
LLMX_TAGGED(ItemDone, "item_done", ResponseItem item; LLMX_FIELDS(v("item", s.item)))

// The response is complete. `finish_reason` as the provider sent it ("" when it sent none).
LLMX_TAGGED(Completed, "completed", std::optional<TokenUsage> usage; std::string finish_reason;
           LLMX_FIELDS(v("usage", s.usage); v("finish_reason", s.finish_reason)))

// Rate-limit information taken from response headers.
LLMX_TAGGED(RateLimits, "rate_limits", RateLimitSnapshot snapshot; LLMX_FIELDS(v("snapshot", s.snapshot)))

using ModelEvent = OneOf<TextDelta, ReasoningDelta, ItemDone, Completed, RateLimits>;

// How one HTTP attempt of a model request ended.
struct StreamOutcome {
  enum Kind : int32_t {
    completed = 0,        // the response finished
    stream_error = 1,     // the stream broke or was cut off: retry per stream_max_retries
    provider_error = 2,   // an error object inside a 200 stream: not retried
    http_status = 3,      // a non-2xx status; `status` and `message` say which
    transport_error = 4,  // no response at all (connect, DNS, TLS...)
  };
  uint32_t attempt = 0;
  int32_t kind = completed;
  int64_t status = 0;
  std::string message;
  Nullable<int64_t> retry_after_ms;
  // A Responses request the provider refused as an API it does not serve (404, a rejected
  // Responses-only field...): why, so an `auto` provider can fall back to Chat.
  std::optional<std::string> responses_refused;
  LLMX_FIELDS(v("attempt", s.attempt); v("kind", s.kind); v("status", s.status); v("message", s.message);
              v("retry_after_ms", s.retry_after_ms); v("responses_refused", s.responses_refused))
};


}  // namespace llmx
