#include "protocol/core/rate_limits.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "protocol/base/text.hpp"

namespace llmx::ratelimits {

namespace {

// Rate-limit headers only, names lowercased once (a response has a dozen or two headers, and
// each family looks up six names).
using Lowered = std::vector<std::pair<std::string, std::string_view>>;

Lowered rate_limit_headers(const Headers& headers) {
  Lowered out;
  for (const auto& [k, v] : headers) {
    auto key = text::lower(k);
    if (key.find("ratelimit") != std::string::npos || key.starts_with("x-llmx-"))
      out.emplace_back(std::move(key), text::trim_view(v));
  }
  return out;
}

// The value of header `name` (lowercase) or of LiteLLM's `llm_provider-<name>` copy.
std::optional<std::string_view> find(const Lowered& headers, std::string_view name) {
  std::optional<std::string_view> prefixed;
  for (const auto& [key, v] : headers) {
    if (key == name) return v;
    if (key.size() == name.size() + 13 && key.starts_with("llm_provider-") && key.ends_with(name)) prefixed = v;
  }
  return prefixed;
}

std::optional<double> number(std::optional<std::string_view> s) {
  if (!s || s->empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || p != s->data() + s->size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> integer(std::optional<std::string_view> s) {
  auto v = number(s);
  if (!v) return std::nullopt;
  return static_cast<int64_t>(std::llround(*v));
}

// "6m0s", "1.5s", "20ms", "1h2m3s" → seconds; nullopt when it is not such a duration.
std::optional<double> duration_seconds(std::string_view s) {
  double total = 0;
  bool any = false;
  while (!s.empty()) {
    size_t n = 0;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
    if (n == 0) return std::nullopt;
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + n, v);
    if (ec != std::errc() || p != s.data() + n) return std::nullopt;
    s.remove_prefix(n);
    double unit = 0;
    if (s.starts_with("ms")) {
      unit = 0.001, s.remove_prefix(2);
    } else if (s.starts_with("h")) {
      unit = 3600, s.remove_prefix(1);
    } else if (s.starts_with("m")) {
      unit = 60, s.remove_prefix(1);
    } else if (s.starts_with("s")) {
      unit = 1, s.remove_prefix(1);
    } else {
      return std::nullopt;
    }
    total += v * unit;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

// One window from limit / remaining / reset headers.
std::optional<RateLimitWindow> counted_window(const Lowered& h, const std::string& limit_key,
                                              const std::string& remaining_key, const std::string& reset_key,
                                              int64_t now) {
  auto limit = number(find(h, limit_key));
  auto remaining = number(find(h, remaining_key));
  if (!limit || !remaining || *limit <= 0) return std::nullopt;
  RateLimitWindow w;
  w.used_percent = std::clamp((*limit - *remaining) / *limit * 100.0, 0.0, 100.0);
  if (auto reset = find(h, reset_key))
    if (auto at = reset_at(*reset, now)) w.resets_at = *at;
  return w;
}

std::optional<RateLimitSnapshot> llmx_family(const Lowered& h) {
  auto window = [&](std::string_view which) -> std::optional<RateLimitWindow> {
    std::string base = "x-llmx-" + std::string(which) + "-";
    auto used = number(find(h, base + "used-percent"));
    if (!used) return std::nullopt;
    RateLimitWindow w;
    w.used_percent = *used;
    if (auto m = integer(find(h, base + "window-minutes"))) w.window_minutes = *m;
    if (auto r = integer(find(h, base + "reset-at"))) w.resets_at = *r;
    return w;
  };
  RateLimitSnapshot s;
  if (auto p = window("primary")) s.primary = *p;
  if (auto p = window("secondary")) s.secondary = *p;
  if (!s.primary && !s.secondary) return std::nullopt;
  return s;
}

std::optional<RateLimitSnapshot> counted_family(const Lowered& h, int64_t now, const std::string& requests_limit,
                                                const std::string& requests_remaining,
                                                const std::string& requests_reset, const std::string& tokens_limit,
                                                const std::string& tokens_remaining, const std::string& tokens_reset) {
  RateLimitSnapshot s;
  if (auto w = counted_window(h, requests_limit, requests_remaining, requests_reset, now)) s.primary = *w;
  if (auto w = counted_window(h, tokens_limit, tokens_remaining, tokens_reset, now)) s.secondary = *w;
  if (!s.primary && !s.secondary) return std::nullopt;
  return s;
}

}  // namespace

std::optional<int64_t> reset_at(std::string_view value, int64_t now_unix) {
  value = text::trim_view(value);
  if (value.empty()) return std::nullopt;
  if (auto plain = number(value)) {
    // A bare number: seconds from now, unless it is already a unix time (after 2001).
    if (*plain >= 1e9) return static_cast<int64_t>(*plain);
    return now_unix + static_cast<int64_t>(std::ceil(*plain));
  }
  if (auto d = duration_seconds(value)) return now_unix + static_cast<int64_t>(std::ceil(*d));
  return text::parse_utc(std::string(value));
}

std::optional<RateLimitSnapshot> from_headers(const Headers& all, int64_t now_unix) {
  auto headers = rate_limit_headers(all);
  if (headers.empty()) return std::nullopt;
  if (auto s = llmx_family(headers)) return s;
  if (auto s = counted_family(headers, now_unix, "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
                              "x-ratelimit-reset-requests", "x-ratelimit-limit-tokens",
                              "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"))
    return s;
  return counted_family(headers, now_unix, "anthropic-ratelimit-requests-limit",
                        "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset",
                        "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
                        "anthropic-ratelimit-tokens-reset");
}

}  // namespace llmx::ratelimits
