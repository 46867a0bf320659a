// What a model stream yields, whatever the wire (Chat Completions or Responses): text and
// reasoning deltas as they arrive, finished items in the model's order, then completion.
#pragma once

#include "protocol/events.hpp"

namespace llmx {

LLMX_MESSAGE_EVENT(TextDelta, "text_delta", text)
LLMX_MESSAGE_EVENT(ReasoningDelta, "reasoning_delta", text)

// A finished item: assistant message, reasoning, or one function call (one per streamed index).
LLMX_EVENT(ItemDone, "item_done", ResponseItem item; LLMX_FIELDS(v("item", s.item)))

// The response is complete. `finish_reason` as the provider sent it ("" when it sent none).
LLMX_EVENT(Completed, "completed", std::optional<TokenUsage> usage; std::string finish_reason;
           LLMX_FIELDS(v("usage", s.usage); v("finish_reason", s.finish_reason)))

// Rate-limit information taken from response headers.
LLMX_EVENT(RateLimits, "rate_limits", RateLimitSnapshot snapshot; LLMX_FIELDS(v("snapshot", s.snapshot)))

using ModelEvent = OneOf<TextDelta, ReasoningDelta, ItemDone, Completed, RateLimits>;

}  // namespace llmx
