// Timing helpers shared by the llmx-bench sections.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace llmx::bench {

inline double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace llmx::bench
