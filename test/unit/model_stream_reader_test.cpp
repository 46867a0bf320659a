#include <doctest/doctest.h>

#include "protocol/model/retry_policy.hpp"
#include "transport/model_stream_reader.hpp"

using namespace llmx;

namespace {
const std::string kText =
    "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: [DONE]\n\n";

// The outcome of one whole attempt: a status (0: no response at all), a body, how it ended.
StreamOutcome outcome_of(int status, std::vector<std::pair<std::string, std::string>> headers, std::string_view body,
                         const std::string& end_error, std::vector<ModelEvent>* events = nullptr) {
  ModelStreamReader r(1, "c");
  std::vector<ModelEvent> out;
  if (status) r.on_head(status, headers, out);
  if (!body.empty()) r.on_body(body, out);
  r.on_end(end_error, out);
  if (events) *events = std::move(out);
  return r.outcome();
}
}  // namespace

TEST_CASE("a complete stream finishes as soon as [DONE] arrives, before the transfer ends") {
  ModelStreamReader r(1, "c");
  std::vector<ModelEvent> out;
  r.on_head(200, {}, out);
  r.on_body(kText, out);
  CHECK(r.finished());
  CHECK(r.outcome().kind == StreamOutcome::completed);
  CHECK(r.outcome().attempt == 1);
  REQUIRE(!out.empty());
  CHECK(out.front().get_if<TextDelta>()->text == "Hi");
  CHECK(out.back().is<Completed>());
}

TEST_CASE("a stream cut before its finish is a stream error naming the transport's reason") {
  ModelStreamReader r(2, "c");
  std::vector<ModelEvent> out;
  r.on_head(200, {}, out);
  r.on_body(kText.substr(0, 60), out);
  CHECK_FALSE(r.finished());
  r.on_end("transfer closed with outstanding read data remaining (curl 18)", out);
  CHECK(r.outcome().kind == StreamOutcome::stream_error);
  CHECK(r.outcome().message ==
        "stream disconnected before completion: transfer closed with outstanding read data remaining (curl 18)");
}

TEST_CASE("a clean end without a finish reason is reported as a cut stream") {
  auto o = outcome_of(200, {}, kText.substr(0, 60), "");
  CHECK(o.kind == StreamOutcome::stream_error);
  CHECK(o.message == "stream disconnected before completion: stream closed before response.completed");
}

TEST_CASE("non-2xx statuses quote the provider's message and keep Retry-After") {
  std::vector<ModelEvent> out;
  auto o = outcome_of(429, {{"Retry-After", "3"}}, R"({"error":{"message":"Rate limit exceeded"}})", "", &out);
  CHECK(out.empty());
  CHECK(o.kind == StreamOutcome::http_status);
  CHECK(o.status == 429);
  CHECK(o.message == "unexpected status 429 Too Many Requests: Rate limit exceeded");
  REQUIRE(o.retry_after_ms);
  CHECK(*o.retry_after_ms == 3000);
}

TEST_CASE("no response at all is a transport error") {
  auto o = outcome_of(0, {}, "", "Couldn't connect to server (curl 7)");
  CHECK(o.kind == StreamOutcome::transport_error);
  CHECK(o.message == "Connection failed: Couldn't connect to server (curl 7)");
}

TEST_CASE("an error object inside a 200 stream is a provider error") {
  ModelStreamReader r(1, "c");
  std::vector<ModelEvent> out;
  r.on_head(200, {}, out);
  r.on_body("data: {\"error\":{\"message\":\"Upstream failed\"}}\n\n", out);
  CHECK(r.finished());
  CHECK(r.outcome().kind == StreamOutcome::provider_error);
  CHECK(r.outcome().message == "unexpected status 200 OK: Upstream failed");
}

TEST_CASE("rate-limit headers of a 2xx or a 429 become one RateLimits event ahead of the stream") {
  ModelStreamReader r(1, "c");
  std::vector<ModelEvent> out;
  r.on_head(200, {{"X-RateLimit-Limit-Requests", "100"}, {"x-ratelimit-remaining-requests", "25"}}, out);
  REQUIRE(out.size() == 1);
  auto* rl = out.front().get_if<RateLimits>();
  REQUIRE(rl);
  REQUIRE(rl->snapshot.primary);
  CHECK(rl->snapshot.primary->used_percent == doctest::Approx(75.0));
  CHECK_FALSE(rl->snapshot.secondary);

  ModelStreamReader limited(1, "c");
  std::vector<ModelEvent> out429;
  limited.on_head(429, {{"x-ratelimit-limit-tokens", "1000"}, {"x-ratelimit-remaining-tokens", "0"}}, out429);
  REQUIRE(out429.size() == 1);
  CHECK(out429.front().get_if<RateLimits>()->snapshot.secondary->used_percent == doctest::Approx(100.0));

  ModelStreamReader plain(1, "c");
  std::vector<ModelEvent> none;
  plain.on_head(500, {{"x-ratelimit-limit-requests", "100"}, {"x-ratelimit-remaining-requests", "25"}}, none);
  plain.on_head(200, {{"content-type", "text/event-stream"}}, none);
  CHECK(none.empty());
}

TEST_CASE("retry-after-ms wins over Retry-After, an HTTP-date Retry-After is understood") {
  ModelStreamReader both(1, "c");
  std::vector<ModelEvent> out;
  both.on_head(429, {{"Retry-After", "3"}, {"retry-after-ms", "1500"}}, out);
  both.on_end("", out);
  REQUIRE(both.outcome().retry_after_ms);
  CHECK(*both.outcome().retry_after_ms == 1500);

  ModelStreamReader dated(1, "c");
  dated.on_head(503, {{"Retry-After", "Thu, 01 Jan 2099 00:00:00 GMT"}}, out);
  dated.on_end("", out);
  REQUIRE(dated.outcome().retry_after_ms);
  CHECK(*dated.outcome().retry_after_ms == retry::kMaxRetryAfterMs);
}

TEST_CASE("an error object saying rate limit or overload is a retryable stream error, a bad request is not") {
  for (auto [chunk, retryable] : std::vector<std::pair<std::string, bool>>{
           {R"({"error":{"message":"Overloaded","type":"overloaded_error","code":529}})", true},
           {R"({"error":{"message":"slow down","type":"rate_limit_error"}})", true},
           {R"({"error":{"message":"boom","code":"500"}})", true},
           {R"({"error":{"message":"bad","type":"invalid_request_error","code":400}})", false},
           {R"({"error":"plain text"})", false}}) {
    const auto& shown_chunk = chunk;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_chunk);
    ModelStreamReader r(1, "c");
    std::vector<ModelEvent> out;
    r.on_head(200, {}, out);
    r.on_body("data: " + chunk + "\n\n", out);
    REQUIRE(r.finished());
    CHECK(r.outcome().kind == (retryable ? StreamOutcome::stream_error : StreamOutcome::provider_error));
    CHECK(r.outcome().message.starts_with("unexpected status 200 OK: "));
  }
}
