// Unit tests for retry decisions (engine.md §2.4, DECISIONS E8): backoff, retryable statuses,
// Retry-After, and the error texts users see.
#include "protocol/model/retry_policy.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace llmx;

TEST_CASE("retry: backoff is 200ms * 2^(n-1) within +-10% for attempts 1..5") {
  for (uint32_t attempt = 1; attempt <= 5; ++attempt) {
    CAPTURE(attempt);
    const double base = 200.0 * double(1u << (attempt - 1));
    std::set<int64_t> seen;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < 500; ++i) {
      int64_t ms = retry::backoff_ms(attempt);
      lo = std::min(lo, ms);
      hi = std::max(hi, ms);
      seen.insert(ms);
    }
    CHECK(lo >= int64_t(base * 0.9));
    CHECK(hi <= int64_t(base * 1.1));
    // Jittered, not constant: 500 draws over a 40ms..640ms wide range are never all equal.
    CHECK(seen.size() > 1);
  }
}

TEST_CASE("retry: backoff doubles from one attempt to the next") {
  // The ranges do not overlap: every draw for attempt n+1 exceeds every draw for attempt n.
  for (uint32_t attempt = 1; attempt < 5; ++attempt) {
    CAPTURE(attempt);
    int64_t max_n = 0, min_next = INT64_MAX;
    for (int i = 0; i < 200; ++i) {
      max_n = std::max(max_n, retry::backoff_ms(attempt));
      min_next = std::min(min_next, retry::backoff_ms(attempt + 1));
    }
    CHECK(max_n < min_next);
  }
}

TEST_CASE("retry: attempt 0 and huge attempts stay sane") {
  int64_t zero = retry::backoff_ms(0);
  CHECK(zero >= 180);
  CHECK(zero <= 220);
  int64_t huge = retry::backoff_ms(1000);  // capped exponent: no overflow, no negative value
  CHECK(huge > 0);
}

TEST_CASE("retry: 429 and 5xx are retryable, other statuses are not") {
  for (int64_t s : {429, 500, 501, 502, 503, 504, 529, 599}) {
    CAPTURE(s);
    CHECK(retry::retryable_status(s));
  }
  for (int64_t s : {200, 204, 301, 400, 401, 403, 404, 408, 409, 413, 422, 428, 430, 499, 600}) {
    CAPTURE(s);
    CHECK_FALSE(retry::retryable_status(s));
  }
}

TEST_CASE("retry: Retry-After takes integer seconds or an HTTP-date, capped") {
  constexpr int64_t now = 1445412480;  // Wed, 21 Oct 2015 07:28:00 GMT
  CHECK(retry::retry_after_ms("5", now) == std::optional<int64_t>(5000));
  CHECK(retry::retry_after_ms("0", now) == std::optional<int64_t>(0));
  CHECK(retry::retry_after_ms(" 12 ", now) == std::optional<int64_t>(12000));
  CHECK(retry::retry_after_ms("120", now) == std::optional<int64_t>(120000));
  CHECK(retry::retry_after_ms("3600", now) == std::optional<int64_t>(retry::kMaxRetryAfterMs));
  CHECK(retry::retry_after_ms("Wed, 21 Oct 2015 07:28:07 GMT", now) == std::optional<int64_t>(7000));
  CHECK(retry::retry_after_ms("Wed, 21 Oct 2015 07:27:00 GMT", now) == std::optional<int64_t>(0));  // past
  CHECK(retry::retry_after_ms("Thu, 22 Oct 2015 07:28:00 GMT", now) == std::optional<int64_t>(retry::kMaxRetryAfterMs));
  CHECK_FALSE(retry::retry_after_ms("", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("   ", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("1.5", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("-1", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("5s", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("abc", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT trailing", now).has_value());
  CHECK_FALSE(retry::retry_after_ms("99999999999999999999999", now).has_value());
}

TEST_CASE("retry: retry-after-ms takes (fractional) milliseconds") {
  CHECK(retry::retry_after_ms_header("250") == std::optional<int64_t>(250));
  CHECK(retry::retry_after_ms_header(" 12.2 ") == std::optional<int64_t>(13));
  CHECK(retry::retry_after_ms_header("999999999") == std::optional<int64_t>(retry::kMaxRetryAfterMs));
  CHECK_FALSE(retry::retry_after_ms_header("-5").has_value());
  CHECK_FALSE(retry::retry_after_ms_header("soon").has_value());
  CHECK_FALSE(retry::retry_after_ms_header("").has_value());
}

TEST_CASE("retry: provider_message reads JSON error bodies") {
  CHECK(retry::provider_message(R"({"error":{"message":"model not found","type":"invalid_request_error"}})") ==
        "model not found");
  CHECK(retry::provider_message(R"({"error":"quota exceeded"})") == "quota exceeded");
  CHECK(retry::provider_message(R"({"message":"top-level message"})") == "top-level message");
  CHECK(retry::provider_message(R"(  {"error": {"message": "spaced"}}  )") == "spaced");
}

TEST_CASE("retry: provider_message falls back to the body text") {
  CHECK(retry::provider_message("Bad Gateway\n") == "Bad Gateway");
  CHECK(retry::provider_message("upstream connect error\r\n  ") == "upstream connect error");
  CHECK(retry::provider_message("") == "");
  CHECK(retry::provider_message("{not json") == "{not json");
  // JSON without a usable message: the body as it is.
  CHECK(retry::provider_message(R"({"error":{"code":42}})") == R"({"error":{"code":42}})");
  CHECK(retry::provider_message(R"({"detail":"x"})") == R"({"detail":"x"})");
  CHECK(retry::provider_message("[1,2]") == "[1,2]");
  // A huge body is cut to a bounded size.
  std::string big(100000, 'x');
  auto msg = retry::provider_message(big);
  CHECK(msg.size() < big.size());
  CHECK(msg.size() >= 1000);
  CHECK(msg.find_first_not_of('x') == std::string::npos);
}

TEST_CASE("retry: reason phrases") {
  CHECK(retry::reason_phrase(400) == "Bad Request");
  CHECK(retry::reason_phrase(401) == "Unauthorized");
  CHECK(retry::reason_phrase(403) == "Forbidden");
  CHECK(retry::reason_phrase(404) == "Not Found");
  CHECK(retry::reason_phrase(429) == "Too Many Requests");
  CHECK(retry::reason_phrase(500) == "Internal Server Error");
  CHECK(retry::reason_phrase(502) == "Bad Gateway");
  CHECK(retry::reason_phrase(503) == "Service Unavailable");
}

TEST_CASE("retry: unexpected_status text") {
  CHECK(retry::unexpected_status(400, R"({"error":{"message":"Invalid model name"}})") ==
        "unexpected status 400 Bad Request: Invalid model name");
  CHECK(retry::unexpected_status(401, "invalid api key\n") == "unexpected status 401 Unauthorized: invalid api key");
  CHECK(retry::unexpected_status(404, "") == "unexpected status 404 Not Found");
  CHECK(retry::unexpected_status(429, R"({"error":"slow down"})") == "unexpected status 429 Too Many Requests: slow down");
  CHECK(retry::unexpected_status(500, "  \n") == "unexpected status 500 Internal Server Error");
}

TEST_CASE("retry: a Retry-After too large for milliseconds never turns negative") {
  for (std::string v : {"9223372036854775807", "9223372036854776", "100000000000000000"}) {
    CAPTURE(v);
    auto ms = retry::retry_after_ms(v, 0);
    CHECK((!ms || *ms >= 0));
  }
}
