// Timing helpers shared by the llmx-bench sections.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace llmx::bench {

inline double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// "0.84 ms (p90 1.05)", or "-" for no samples.
inline std::string p90_text(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? "-" : fmt::format("{:.2f} ms (p90 {:.2f})", median(v), v[v.size() * 9 / 10]);
}

}  // namespace llmx::bench
