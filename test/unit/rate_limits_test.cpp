#include <doctest/doctest.h>

#include "protocol/core/rate_limits.hpp"

using namespace llmx;
using ratelimits::from_headers;
using ratelimits::reset_at;

namespace {
constexpr int64_t kNow = 1'735'689'600;  // 2025-01-01T00:00:00Z
}

TEST_CASE("rate limits: reset values in every spelling providers use") {
  CHECK(reset_at("6m0s", kNow) == kNow + 360);
  CHECK(reset_at("1.5s", kNow) == kNow + 2);  // rounded up: never report a reset that has not happened
  CHECK(reset_at("20ms", kNow) == kNow + 1);
  CHECK(reset_at("1h2m3s", kNow) == kNow + 3723);
  CHECK(reset_at("30", kNow) == kNow + 30);                     // LiteLLM: seconds
  CHECK(reset_at("1735693200", kNow) == 1735693200);            // already a unix time
  CHECK(reset_at("2025-01-01T01:00:00Z", kNow) == kNow + 3600);  // Anthropic: RFC 3339
  CHECK(reset_at(" 2025-01-01T00:00:30.5Z ", kNow) == kNow + 30);
  CHECK_FALSE(reset_at("", kNow));
  CHECK_FALSE(reset_at("soon", kNow));
  CHECK_FALSE(reset_at("5x", kNow));
  CHECK_FALSE(reset_at("m", kNow));
}

TEST_CASE("rate limits: OpenAI / LiteLLM x-ratelimit-* headers: requests primary, tokens secondary") {
  auto s = from_headers({{"x-ratelimit-limit-requests", "200"},
                         {"x-ratelimit-remaining-requests", "150"},
                         {"x-ratelimit-reset-requests", "6m0s"},
                         {"X-RateLimit-Limit-Tokens", "40000"},
                         {"X-RateLimit-Remaining-Tokens", "39000"},
                         {"X-RateLimit-Reset-Tokens", "1.2s"}},
                        kNow);
  REQUIRE(s);
  REQUIRE(s->primary);
  CHECK(s->primary->used_percent == doctest::Approx(25.0));
  CHECK(*s->primary->resets_at == kNow + 360);
  CHECK_FALSE(s->primary->window_minutes);
  REQUIRE(s->secondary);
  CHECK(s->secondary->used_percent == doctest::Approx(2.5));
  CHECK(*s->secondary->resets_at == kNow + 2);
}

TEST_CASE("rate limits: Anthropic headers, directly or behind LiteLLM's llm_provider- prefix") {
  for (std::string prefix : {"", "llm_provider-"}) {
    auto s = from_headers({{prefix + "anthropic-ratelimit-requests-limit", "50"},
                           {prefix + "anthropic-ratelimit-requests-remaining", "49"},
                           {prefix + "anthropic-ratelimit-requests-reset", "2025-01-01T00:01:00Z"},
                           {prefix + "anthropic-ratelimit-tokens-limit", "80000"},
                           {prefix + "anthropic-ratelimit-tokens-remaining", "20000"}},
                          kNow);
    REQUIRE(s);
    CHECK(s->primary->used_percent == doctest::Approx(2.0));
    CHECK(*s->primary->resets_at == kNow + 60);
    CHECK(s->secondary->used_percent == doctest::Approx(75.0));
    CHECK_FALSE(s->secondary->resets_at);
  }
}

TEST_CASE("rate limits: the reference's x-llmx-* headers win over the others") {
  auto s = from_headers({{"x-llmx-primary-used-percent", "42.5"},
                         {"x-llmx-primary-window-minutes", "300"},
                         {"x-llmx-primary-reset-at", "1735700000"},
                         {"x-ratelimit-limit-requests", "100"},
                         {"x-ratelimit-remaining-requests", "1"}},
                        kNow);
  REQUIRE(s);
  CHECK(s->primary->used_percent == doctest::Approx(42.5));
  CHECK(*s->primary->window_minutes == 300);
  CHECK(*s->primary->resets_at == 1735700000);
  CHECK_FALSE(s->secondary);
}

TEST_CASE("rate limits: nothing usable means no snapshot") {
  CHECK_FALSE(from_headers({}, kNow));
  CHECK_FALSE(from_headers({{"content-type", "text/event-stream"}}, kNow));
  CHECK_FALSE(from_headers({{"x-ratelimit-limit-requests", "0"}, {"x-ratelimit-remaining-requests", "0"}}, kNow));
  CHECK_FALSE(from_headers({{"x-ratelimit-limit-requests", "abc"}, {"x-ratelimit-remaining-requests", "1"}}, kNow));
  CHECK_FALSE(from_headers({{"x-ratelimit-remaining-requests", "5"}}, kNow));  // no limit: no percentage
  CHECK_FALSE(from_headers({{"x-llmx-primary-used-percent", "nan"}}, kNow));
  // More remaining than the limit (a proxy's own counter) is clamped, never negative.
  auto odd = from_headers({{"x-ratelimit-limit-requests", "10"}, {"x-ratelimit-remaining-requests", "12"}}, kNow);
  REQUIRE(odd);
  CHECK(odd->primary->used_percent == doctest::Approx(0.0));
}
