#include "heap_policy.hpp"

#include <malloc.h>

#include <string_view>

namespace llmx::cli {

bool hold_mmap_threshold(const char* tunables) {
  if (tunables && std::string_view(tunables).find("mmap_threshold") != std::string_view::npos) return false;
  return mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
}

}  // namespace llmx::cli
