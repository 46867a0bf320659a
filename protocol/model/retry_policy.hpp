// Retry decisions for model requests (engine.md §2.4, DECISIONS E8): what is retried, how long
// to wait, and the error texts users see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llmx::retry {

// 200 ms × 2^(attempt−1) × jitter in [0.9, 1.1), attempt starting at 1.
int64_t backoff_ms(uint32_t attempt);

// 429 and 5xx are worth retrying; other statuses fail at once.
bool retryable_status(int64_t status);

// The longest wait a server may ask for; longer requests wait this long (a retry that would
// sit for an hour helps nobody; the error after the last attempt tells the user what happened).
inline constexpr int64_t kMaxRetryAfterMs = 120'000;

// A Retry-After header: integer seconds or an HTTP-date (relative to `now_unix`), in
// milliseconds, at most kMaxRetryAfterMs; nullopt when it is neither.
std::optional<int64_t> retry_after_ms(std::string_view header_value, int64_t now_unix);
// OpenAI's `retry-after-ms` header (milliseconds, possibly fractional).
std::optional<int64_t> retry_after_ms_header(std::string_view header_value);

// The provider said the request does not fit its context window (compaction then drops the
// oldest items; ACP calls it max_tokens).
bool is_context_window_error(std::string_view message);

// The canonical reason phrase ("Too Many Requests").
std::string_view reason_phrase(int64_t status);

// The provider's message from an error body: error.message of a JSON body, else the body text.
std::string provider_message(std::string_view body);

// `unexpected status 400 Bad Request: <message>`.
std::string unexpected_status(int64_t status, std::string_view body);

}  // namespace llmx::retry
