// Rate-limit state from a model response's HTTP headers, whichever family the provider speaks
// (engine.md §3.3; LiteLLM's response-header docs):
//   x-llmx-{primary,secondary}-{used-percent,window-minutes,reset-at}   the reference's own
//   x-ratelimit-{limit,remaining,reset}-{requests,tokens}               OpenAI, Azure, Groq... and
//                                                                        LiteLLM, which normalises
//                                                                        every provider to it
//   anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}       Anthropic (also behind
//                                                                        LiteLLM's `llm_provider-`)
// The first family present wins, in that order. Requests become the primary window, tokens the
// secondary one; `used_percent` = (limit − remaining) / limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/core/events.hpp"

namespace llmx::ratelimits {

using Headers = std::vector<std::pair<std::string, std::string>>;

// nullopt when no family has a usable window. `now_unix` turns relative resets into times.
std::optional<RateLimitSnapshot> from_headers(const Headers& headers, int64_t now_unix);

// A reset value as a unix time: a duration ("6m0s", "1.5s", "20ms", "1h2m"), seconds from now
// ("30", small numbers), a unix time (large numbers) or an RFC 3339 time
// ("2025-01-01T12:00:00Z"). nullopt when it is none of those.
std::optional<int64_t> reset_at(std::string_view value, int64_t now_unix);

}  // namespace llmx::ratelimits
