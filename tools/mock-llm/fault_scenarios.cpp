#include "tools/mock-llm/fault_scenarios.hpp"

#include "tools/mock-llm/text_util.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>

namespace mockllm {
namespace {

constexpr long long kDefaultHugeBytes = 10 * 1024 * 1024;
constexpr long long kMaxHugeBytes = 256LL * 1024 * 1024; // the renderers copy it a few times

struct StatusInfo {
  int status;
  const char *type, *code;
};

// Error type and code a provider typically pairs with a status; others get a generic pair.
StatusInfo status_info(int status) {
  static constexpr StatusInfo known[] = {
      {400, "invalid_request_error", "invalid_request"},
      {401, "authentication_error", "invalid_api_key"},
      {403, "permission_error", "permission_denied"},
      {404, "not_found_error", "model_not_found"},
      {408, "timeout_error", "request_timeout"},
      {409, "conflict_error", "conflict"},
      {413, "invalid_request_error", "request_too_large"},
      {422, "invalid_request_error", "unprocessable_entity"},
      {429, "rate_limit_error", "rate_limit_exceeded"},
      {500, "server_error", "internal_error"},
      {502, "server_error", "bad_gateway"},
      {503, "server_error", "service_unavailable"},
      {504, "timeout_error", "gateway_timeout"},
      {529, "overloaded_error", "overloaded"},
  };
  for (const auto &k : known)
    if (k.status == status) return k;
  return {status, status < 500 ? "invalid_request_error" : "server_error", "upstream_error"};
}

// HTTP forbids a body on 1xx, 204 and 304 answers.
bool status_allows_body(int status) { return status >= 200 && status != 204 && status != 304; }


bool is_decimal(const std::string &s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v >= 0;
}

void bad_param(Plan &plan, const std::string &message) {
  plan.is_error = true;
  plan.error.status = 400;
  plan.error.body = error_body(message, "invalid_request_error", "bad_mock_param");
}

// `status code=N [body=json|text|none] [times=K] [retry_after=S|date|none] [retry_after_ms=M]`
void plan_status(const Directive &d, const TimesCounter &times, Plan &plan) {
  const long long code = d.int_param("code", -1, -1, 1000);
  if (code < 100 || code > 599 || code == 200)
    return bad_param(plan, "status needs code=N with N in 100..599 and not 200");
  const std::string body = d.param("body").value_or("json");
  if (body != "json" && body != "text" && body != "none")
    return bad_param(plan, "status body= must be json, text or none");
  std::optional<std::string> retry_after;
  if (auto ra = d.param("retry_after")) {
    if (*ra == "date")
      // Two seconds ahead: an HTTP-date has whole seconds, so one second ahead could be ~0 s away.
      retry_after = format_utc(std::time(nullptr) + 2, "%a, %d %b %Y %H:%M:%S GMT");
    else if (is_decimal(*ra))
      retry_after = *ra;
    else if (*ra != "none")
      return bad_param(plan, "status retry_after= must be seconds, date or none");
  } else if (code == 429) {
    retry_after = "1";
  }
  auto retry_after_ms = d.param("retry_after_ms");
  if (retry_after_ms && !is_decimal(*retry_after_ms))
    return bad_param(plan, "status retry_after_ms= must be a number of milliseconds");

  if (!should_fail(d, times)) {
    plan.script = text_script(d, 4);
    return;
  }
  const int status = static_cast<int>(code);
  plan.is_error = true;
  plan.error.status = status;
  if (body == "none" || !status_allows_body(status)) {
    plan.error.content_type.clear();
  } else if (body == "text") {
    plan.error.body = "upstream says " + std::to_string(status);
    plan.error.content_type = "text/plain";
  } else {
    const StatusInfo info = status_info(status);
    plan.error.body = error_body("Mock status " + std::to_string(status), info.type, info.code);
  }
  if (retry_after) plan.error.headers.emplace_back("Retry-After", *retry_after);
  if (retry_after_ms) plan.error.headers.emplace_back("retry-after-ms", *retry_after_ms);
  if (auto family = d.param("ratelimit"); family && status == 429)
    for (auto &h : rate_limit_headers(*family, d.int_param("ratelimit_remaining", 0, 0, 100)))
      plan.error.headers.push_back(std::move(h));
}

// `error_chunk kind=rate_limit|overloaded|invalid [times=K]`: an error object inside a 200
// stream after some output, as providers send when they fail mid-answer.
void plan_error_chunk(const Directive &d, const TimesCounter &times, Plan &plan) {
  struct Kind {
    const char *name, *message, *type, *responses_code;
    int status;
  };
  static constexpr Kind kinds[] = {
      {"rate_limit", "Rate limit reached (mock)", "rate_limit_error", "rate_limit_exceeded", 429},
      {"overloaded", "Overloaded (mock)", "overloaded_error", "server_is_overloaded", 529},
      {"invalid", "Invalid request (mock)", "invalid_request_error", "invalid_request", 400},
  };
  const std::string name = d.param("kind").value_or("rate_limit");
  const auto *kind = std::find_if(std::begin(kinds), std::end(kinds),
                                  [&](const Kind &k) { return name == k.name; });
  if (kind == std::end(kinds))
    return bad_param(plan, "error_chunk kind= must be rate_limit, overloaded or invalid");
  if (!should_fail(d, times)) {
    plan.script = text_script(d, 4);
    return;
  }
  // Numeric "code", as Anthropic-style proxies put the HTTP status there.
  std::string json = R"({"error":{"message":)";
  append_json_string(json, kind->message);
  json += R"(,"type":)";
  append_json_string(json, kind->type);
  json += R"(,"code":)" + std::to_string(kind->status) + "}}";
  Script &s = plan.script;
  s.role();
  s.content("Partial answer ");
  s.stream_error(json, kind->responses_code, kind->message, false);
  s.end();
  s.non_stream_status = kind->status;
  s.non_stream_error_body = json;
}

// `context_length`: the prompt does not fit. Chat answers HTTP 400 up front; the Responses API
// reports it as a failed response inside the stream.
void plan_context_length(const ChatRequest &req, const Directive &d, const TimesCounter &times,
                         Plan &plan) {
  if (!should_fail(d, times)) {
    plan.script = text_script(d, 4);
    return;
  }
  constexpr const char *kCode = "context_length_exceeded";
  if (!req.responses_wire) {
    const size_t tokens = std::max<size_t>(128001, req.content_chars / 4);
    plan.is_error = true;
    plan.error.status = 400;
    plan.error.body = error_body("This model's maximum context length is 128000 tokens. However, "
                                 "your messages resulted in " +
                                     std::to_string(tokens) +
                                     " tokens. Please reduce the length of the messages.",
                                 "invalid_request_error", kCode);
    return;
  }
  const std::string message = "Your input exceeds the context window of this model.";
  const std::string body = error_body(message, "invalid_request_error", kCode);
  Script &s = plan.script;
  s.role();
  s.stream_error(body, kCode, message, true);
  s.non_stream_status = 400;
  s.non_stream_error_body = body;
}

} // namespace

Script sc_headers_only(const ChatRequest &, const Directive &) {
  Script s;
  s.hang(); // headers are already out when the body provider runs
  return s;
}

Script sc_close_each(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.content("Partial ");
  s.cut();
  return s;
}

Script sc_huge(const ChatRequest &, const Directive &d) {
  const auto n = static_cast<size_t>(d.int_param("bytes", kDefaultHugeBytes, 1, kMaxHugeBytes));
  std::string text(n, 'x');
  for (size_t i = 99; i < n; i += 100) text[i] = '\n';
  Script s;
  s.role();
  s.content(std::move(text));
  s.finish("stop");
  return s;
}

Script sc_bytewise(const ChatRequest &, const Directive &d) {
  Script s = text_script(d, 4);
  s.bytewise = true;
  return s;
}

Script sc_non_utf8(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.content("Valid ");
  // 0xC3 0x28: a lead byte followed by a non-continuation; 0xFF never occurs in UTF-8.
  for (const char *bad : {"bro\xC3\x28ken ", "lone\xFF byte "}) {
    Event e(EventKind::Content, bad);
    e.raw_utf8 = true;
    s.add(std::move(e));
  }
  s.content("end.");
  s.finish("stop");
  return s;
}

Script sc_empty(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.finish("stop");
  return s;
}

Script sc_no_finish(const ChatRequest &, const Directive &d) {
  Script s = text_script(d, 4);
  s.events.pop_back(); // the finish chunk
  return s;
}

Script sc_length(const ChatRequest &, const Directive &d) {
  Script s = text_script(d, 4);
  s.events.back().text = "length";
  return s;
}

Script sc_content_filter(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.content("I can describe ").content("part of that, ").content("but ");
  s.finish("content_filter");
  return s;
}

bool plan_fault(const ChatRequest &req, const Directive &d, const TimesCounter &times,
                Plan &plan) {
  if (d.name == "status")
    plan_status(d, times, plan);
  else if (d.name == "error_chunk")
    plan_error_chunk(d, times, plan);
  else if (d.name == "context_length")
    plan_context_length(req, d, times, plan);
  else
    return false;
  return true;
}

} // namespace mockllm
