#include "protocol/model/retry_policy.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <random>

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/text.hpp"

namespace llmx::retry {

int64_t backoff_ms(uint32_t attempt) {
  thread_local std::mt19937 gen{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  double base = 200.0 * static_cast<double>(1ull << std::min<uint32_t>(attempt > 0 ? attempt - 1 : 0, 20));
  return static_cast<int64_t>(base * jitter(gen));
}

bool retryable_status(int64_t status) { return status == 429 || (status >= 500 && status <= 599); }

std::optional<int64_t> retry_after_ms(std::string_view v, int64_t now_unix) {
  v = text::trim_view(v);
  int64_t secs = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (ec == std::errc() && p == v.data() + v.size()) {
    if (secs < 0) return std::nullopt;
    return std::min(secs, kMaxRetryAfterMs / 1000) * 1000;
  }
  // An HTTP-date ("Tue, 24 Nov 2026 14:00:01 GMT"): the wait until then.
  std::tm tm{};
  std::string text(v);
  const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  int64_t at = static_cast<int64_t>(::timegm(&tm));
  return std::clamp<int64_t>((at - now_unix) * 1000, 0, kMaxRetryAfterMs);
}

std::optional<int64_t> retry_after_ms_header(std::string_view v) {
  v = text::trim_view(v);
  double ms = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
  if (ec != std::errc() || p != v.data() + v.size() || !(ms >= 0)) return std::nullopt;
  return std::min<int64_t>(static_cast<int64_t>(std::ceil(ms)), kMaxRetryAfterMs);
}

std::string_view reason_phrase(int64_t s) {
  switch (s) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return s >= 500 ? "Server Error" : (s >= 400 ? "Client Error" : "");
  }
}

std::string provider_message(std::string_view body) {
  try {
    json::Parser p;
    auto root = p.parse(body);
    if (root.is_object()) {
      auto o = root.get_object().value_unsafe();
      if (auto err = json::get(o, "error")) {
        if (err->is_string()) return std::string(err->get_string().value_unsafe());
        if (err->is_object())
          if (auto m = json::get_string(err->get_object().value_unsafe(), "message")) return std::string(*m);
      }
      if (auto m = json::get_string(o, "message")) return std::string(*m);
    }
  } catch (const json::DecodeError&) {
  }
  std::string text(body.substr(0, 4096));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string unexpected_status(int64_t status, std::string_view body) {
  auto msg = provider_message(body);
  auto head = fmt::format("unexpected status {} {}", status, reason_phrase(status));
  return msg.empty() ? head : head + ": " + msg;
}

bool is_context_window_error(std::string_view message) {
  auto has = [&](std::string_view needle) {
    return std::search(message.begin(), message.end(), needle.begin(), needle.end(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           }) != message.end();
  };
  return has("context_length_exceeded") || has("context window") || has("maximum context length") ||
         has("too many tokens") || has("prompt is too long");
}

}  // namespace llmx::retry
