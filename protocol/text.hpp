// Small text helpers shared across llmx (one trim instead of one per file).
#pragma once

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

}  // namespace llmx::text
