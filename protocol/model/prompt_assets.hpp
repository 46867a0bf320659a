// Text assets compiled from protocol/prompts/*.md (DECISIONS E13): our own system prompt, tool
// descriptions and compaction prompt, kept as readable files in the tree.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace llmx::prompts {

// Every asset as (file name without .md, text).
const std::vector<std::pair<std::string_view, std::string_view>>& all();

// The asset with that name; empty when there is none.
inline std::string_view get(std::string_view name) {
  for (const auto& [n, text] : all())
    if (n == name) return text;
  return {};
}

}  // namespace llmx::prompts
