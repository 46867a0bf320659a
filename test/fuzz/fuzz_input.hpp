// What the fuzz targets share: cutting one input into several messages (so the fuzzer can build
// streams and sessions), and checks of properties the code promises, which abort when broken.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace llmx::fuzz {

inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The pieces of `text` between occurrences of `delim` (empty pieces kept).
inline std::vector<std::string_view> split(std::string_view text, std::string_view delim) {
  std::vector<std::string_view> out;
  for (size_t pos = 0;;) {
    size_t at = text.find(delim, pos);
    if (at == std::string_view::npos) {
      out.push_back(text.substr(pos));
      return out;
    }
    out.push_back(text.substr(pos, at - pos));
    pos = at + delim.size();
  }
}

// A broken promise is a finding: abort, so libFuzzer saves the input.
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: property violated: %s\n", what);
  std::abort();
}

}  // namespace llmx::fuzz
