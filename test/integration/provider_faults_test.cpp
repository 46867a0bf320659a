// Fault injection against mock-llm through the real binary (issue 6, DECISIONS E8): every HTTP
// status with and without a body, servers that send headers and then nothing or close after
// every chunk, a 10 MB event, JSON split at every byte, invalid UTF-8, error objects inside a 200
// stream, empty and truncated answers, the context window. Each ends in the documented retry or
// a clear error quoting the provider — never a crash, a hang past the idle timeout, or a turn
// missing from the rollout. And connections are reused across turns and conversations.
#include <doctest/doctest.h>

#include <chrono>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {


struct Run : ExecJson {
  std::string error;  // the message of the error event, "" when none
  std::vector<std::string> stream_errors;
};

struct Provider {
  TempDir home{"llmx-faults"};
  MockLlm mock;

  // `llmx exec --core-events` with quick retries (1 request retry, 2 stream retries, a 500 ms idle
  // timeout) unless `flags` say otherwise.
  Run exec(const std::string& prompt, std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), {"-c", "model_providers.litellm.request_max_retries=1", "-c",
                                 "model_providers.litellm.stream_max_retries=2", "-c",
                                 "model_providers.litellm.stream_idle_timeout_ms=" + std::to_string(500 * kSlowdown)});
    Run r;
    static_cast<ExecJson&>(r) = run_exec_json(flags, prompt, llmx_env(home.path(), mock.url()), std::chrono::seconds(30));
    for (const auto& e : r.events) {
      auto type = e.str_or("/msg/type", "");
      if (type == "error") r.error = e.str("/msg/message");
      if (type == "stream_error") r.stream_errors.push_back(e.str("/msg/message"));
    }
    return r;
  }
  int64_t requests() {
    Message stats(http_get(mock.url(), "/_mock/stats"));
    return stats.integer("/requests");
  }
};

}  // namespace

TEST_CASE("faults: 4xx statuses fail at once quoting the provider, with a JSON, text or empty body") {
  struct Case {
    int code;
    std::string body, expected;
  };
  for (const auto& c : std::vector<Case>{
           {400, "json", "unexpected status 400 Bad Request: Mock status 400"},
           {401, "text", "unexpected status 401 Unauthorized: upstream says 401"},
           {403, "none", "unexpected status 403 Forbidden"},
           {404, "json", "unexpected status 404 Not Found: Mock status 404"},
           {413, "text", "unexpected status 413 Payload Too Large: upstream says 413"},
       }) {
    CAPTURE(c.code);
    CAPTURE(c.body);
    Provider p;
    auto r = p.exec("@mock:status code=" + std::to_string(c.code) + " body=" + c.body);
    CHECK_FALSE(r.ok());
    CHECK(r.error == c.expected);
    CHECK(r.stream_errors.empty());  // never retried
    CHECK(p.requests() == 1);
    CHECK(contains(r.raw.err, c.expected));
  }
}

TEST_CASE("faults: 429 and 5xx are retried, with and without bodies, and the turn succeeds") {
  for (int code : {429, 500, 502, 503}) {
    for (std::string body : {"json", "none"}) {
      CAPTURE(code);
      CAPTURE(body);
      Provider p;
      auto r = p.exec("@mock:status code=" + std::to_string(code) + " body=" + body + " times=1 retry_after_ms=10");
      CHECK(r.ok());
      CHECK(r.last_message() == kMockAnswer);
      REQUIRE(r.stream_errors.size() == 1);
      CHECK(contains(r.stream_errors[0], "unexpected status " + std::to_string(code)));
      CHECK(p.requests() == 2);
    }
  }
}

TEST_CASE("faults: a status that keeps failing ends with the provider's message and the retry limit") {
  Provider p;
  auto r = p.exec("@mock:status code=503 body=json retry_after=none");
  CHECK_FALSE(r.ok());
  CHECK(r.error == "unexpected status 503 Service Unavailable: Mock status 503 (exceeded retry limit: 1 retries)");
  CHECK(r.stream_errors.size() == 1);
  CHECK(p.requests() == 2);
}

TEST_CASE("faults: Retry-After as seconds and as an HTTP-date are honoured") {
  for (std::string retry_after : {"1", "date"}) {
    CAPTURE(retry_after);
    Provider p;
    auto t0 = std::chrono::steady_clock::now();
    auto r = p.exec("@mock:status code=429 times=1 retry_after=" + retry_after);
    auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(r.ok());
    CHECK(waited >= 500ms);  // a plain backoff would be ~200 ms; the server asked for ~1 s
  }
}

TEST_CASE("faults: headers and then nothing end at the idle timeout, reconnecting first") {
  Provider p;
  auto t0 = std::chrono::steady_clock::now();
  auto r = p.exec("@mock:headers_only");
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK_FALSE(r.ok());
  CHECK(r.error == "stream disconnected before completion: idle timeout waiting for SSE (gave up after 2 reconnects)");
  CHECK(r.stream_errors.size() == 2);
  CHECK(p.requests() == 3);
  CHECK(took < 10s);  // 3 × 500 ms idle + backoff, not the server's 10 minutes
}

TEST_CASE("faults: a server that closes after every chunk gives up after stream_max_retries") {
  Provider p;
  auto r = p.exec("@mock:close_each");
  CHECK_FALSE(r.ok());
  CHECK(contains(r.error, "stream disconnected before completion"));
  CHECK(contains(r.error, "(gave up after 2 reconnects)"));
  CHECK(r.stream_errors.size() == 2);
  CHECK(p.requests() == 3);
}

TEST_CASE("faults: a 10 MB single event arrives whole") {
  Provider p;
  auto r = p.exec("@mock:huge");
  CHECK(r.ok());
  CHECK(r.last_message().size() >= 10u << 20);
}

TEST_CASE("faults: JSON split at every byte, invalid UTF-8, empty and truncated answers") {
  Provider p;
  auto bytewise = p.exec("@mock:bytewise");
  CHECK_MESSAGE(bytewise.ok(), bytewise.problem());
  CHECK(bytewise.last_message() == kMockAnswer);

  auto bad_utf8 = p.exec("@mock:non_utf8");
  CHECK_MESSAGE(bad_utf8.ok(), bad_utf8.problem());
  CHECK(contains(bad_utf8.last_message(), "\xEF\xBF\xBD"));  // U+FFFD where the bytes were invalid

  auto empty = p.exec("@mock:empty");
  CHECK_MESSAGE(empty.ok(), empty.problem());
  CHECK(empty.events.back().text("/msg/last_agent_message") == "null");

  auto no_finish = p.exec("@mock:no_finish");
  CHECK_MESSAGE(no_finish.ok(), no_finish.problem());
  CHECK_FALSE(no_finish.last_message().empty());

  auto length = p.exec("@mock:length");
  CHECK_MESSAGE(length.ok(), length.problem());
  bool warned = false;
  for (const auto& e : length.events) warned |= e.str_or("/msg/type", "") == "warning";
  CHECK(warned);

  auto filtered = p.exec("@mock:content_filter dialect=azure");
  CHECK_MESSAGE(filtered.ok(), filtered.problem());
  bool filter_warning = false;
  for (const auto& e : filtered.events)
    filter_warning |= e.str_or("/msg/type", "") == "warning" && contains(e.str("/msg/message"), "content filter");
  CHECK(filter_warning);
}

TEST_CASE("faults: error objects inside a 200 stream: overload and rate limits retry, a bad request does not") {
  Provider p;
  for (std::string kind : {"overloaded", "rate_limit"}) {
    CAPTURE(kind);
    auto r = p.exec("@mock:error_chunk kind=" + kind + " times=1");
    CHECK(r.ok());
    CHECK(r.last_message() == kMockAnswer);
    CHECK(r.stream_errors.size() == 1);
  }
  auto before = p.requests();
  auto invalid = p.exec("@mock:error_chunk kind=invalid");
  CHECK_FALSE(invalid.ok());
  CHECK(invalid.error == "unexpected status 200 OK: Invalid request (mock)");
  CHECK(p.requests() == before + 1);
}

TEST_CASE("faults: the Responses wire fails and recovers the same way") {
  Provider p;
  const std::vector<std::string> wire = {"-c", "model_providers.litellm.wire_api=\"responses\""};
  auto limited = p.exec("@mock:error_chunk kind=rate_limit times=1", wire);
  CHECK(limited.ok());
  CHECK(limited.stream_errors.size() == 1);
  auto context = p.exec("@mock:context_length", wire);
  CHECK_FALSE(context.ok());
  CHECK(contains(context.error, "Your input exceeds the context window of this model."));
  auto status = p.exec("@mock:status code=500 times=1", wire);
  CHECK(status.ok());
  auto cut = p.exec("@mock:close_each", wire);
  CHECK_FALSE(cut.ok());
  CHECK(contains(cut.error, "gave up after 2 reconnects"));
}

TEST_CASE("faults: a failed turn is still in the rollout and the conversation resumes") {
  Provider p;
  auto failed = p.exec("remember OSPREY @mock:status code=400");
  CHECK_FALSE(failed.ok());
  // exec resume --last continues the failed conversation: its history has the first prompt.
  auto r = run_llmx({"exec", "--skip-git-repo-check", "resume", "--last", "@mock:echo again"}, llmx_env(p.home.path(), p.mock.url()));
  INFO(r.err);
  CHECK(r.status.describe() == "exit code 0");
  CHECK(r.out == "echo: again\n");
  auto requests = recorded_requests(p.mock);
  CHECK(contains(requests.text("/requests/1/messages"), "remember OSPREY"));
}

TEST_CASE("faults: one keep-alive connection serves every turn and conversation") {
  TempDir home{"llmx-reuse"};
  MockLlm mock;
  McpClient mcp(home.path(), mock.url());
  mcp.initialize();
  for (int i = 0; i < 4; ++i) {  // four conversations, one after the other
    auto id = mcp.call_llmx("@mock:text turn " + std::to_string(i));
    auto resp = mcp.wait_for_response(id);
    REQUIRE_FALSE(result_is_error(resp));
    auto thread = resp.str("/result/structuredContent/threadId");
    auto reply = mcp.wait_for_response(mcp.call_reply(thread, "@mock:echo again"));  // and a second turn
    REQUIRE_FALSE(result_is_error(reply));
  }
  Message stats(http_get(mock.url(), "/_mock/stats"));
  CHECK(stats.integer("/requests") == 8);
  // One per process that streams: the server, or each of its worker nodes (LLMX_TEST_NODES).
  CHECK(stats.integer("/connections") == streaming_processes());
}
