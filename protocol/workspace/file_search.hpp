// fuzzyFileSearch's plain code: fuzzy scoring of paths and the .gitignore-aware walk of the
// workspace. Blocking; the server runs it off the scheduler (actors/account_methods.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/reflect.hpp"

namespace llmx::workspace {

struct FuzzyFileMatch {
  std::string root;
  std::string path;       // relative to root, `/`-separated
  std::string file_name;  // the last component of path
  int64_t score = 0;
  Nullable<std::vector<uint32_t>> indices;  // matched character (code point) positions in path
  LLMX_FIELDS(v("root", s.root); v("path", s.path); v("file_name", s.file_name); v("score", s.score);
              v("indices", s.indices))
};


struct FuzzyScore {
  int64_t score = 0;
  std::vector<uint32_t> indices;  // code point positions in the candidate, ascending
};

// Scores `candidate` against `query`: every whitespace-separated term of the query must appear in
// the candidate as a subsequence (ASCII case-insensitive); nullopt otherwise, and for a query
// without terms. Higher is better: each matched character counts, more so at the start, after a
// `/`, `_`, `-`, `.` or space, at a lowercase-to-uppercase step and right after the previous
// match; gaps cost a little. Each term takes its best alignment.
std::optional<FuzzyScore> fuzzy_score(std::string_view query, std::string_view candidate);

// Score descending, then path ascending (then root).
void sort_matches(std::vector<FuzzyFileMatch>& matches);

inline constexpr size_t kFuzzyMatchesPerRoot = 50;

// Walks each root (files only, `.git` skipped, `.gitignore` rules honoured, symlinked directories
// not followed), keeps the best `per_root` matches of each and returns them all sorted. Stops
// early, returning what it has, when `cancel` becomes true. An empty query gives nothing.
// Blocking: call it off the scheduler.
std::vector<FuzzyFileMatch> fuzzy_file_search(std::string_view query, const std::vector<std::string>& roots,
                                              const std::atomic<bool>* cancel = nullptr,
                                              size_t per_root = kFuzzyMatchesPerRoot);

// One .gitignore pattern matched against a path relative to the .gitignore's directory
// (`dir_only` patterns only match directories). Exposed for tests.
bool gitignore_match(std::string_view pattern, std::string_view rel_path, bool is_dir);

}  // namespace llmx::workspace
