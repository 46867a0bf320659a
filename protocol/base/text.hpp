// Small text helpers shared across llmx (one trim instead of one per file).
#pragma once

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace llmx::text {

inline constexpr std::string_view kWhitespace = " \t\r\n\f\v";

// `s` without leading and trailing characters from `chars`.
inline std::string_view trim_view(std::string_view s, std::string_view chars = kWhitespace) {
  auto b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

inline std::string trim(std::string_view s, std::string_view chars = kWhitespace) {
  return std::string(trim_view(s, chars));
}

// ASCII lowercase copy (header names, model names, hex ids).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// `YYYY-MM-DDThh:mm:ss…Z` (UTC, fractions and the zone suffix ignored) → unix seconds.
inline std::optional<int64_t> parse_utc(const std::string& ts) {
  std::tm tm{};
  if (std::sscanf(ts.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(::timegm(&tm));
}

}  // namespace llmx::text
