// The per-task turn diff tracker (engine.md §8.6): snapshots every file the first time a patch
// touches it and renders the aggregate git-style diff of baseline versus current disk content.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/core/events.hpp"

namespace llmx::patch {

// Git blob id: sha1("blob <len>\0" + data).
std::string git_blob_oid(std::string_view data);

class TurnDiffTracker {
 public:
  // Call with the `changes` of every patch_apply_begin, before the patch touches the disk.
  void on_patch_begin(const std::map<std::string, FileChange>& changes);

  // The aggregate diff, files sorted by repo-relative path; "" when nothing changed.
  std::string unified_diff() const;

 private:
  struct Baseline {
    std::string path;     // the external path when first seen
    std::string content;  // bytes (symlinks: the link target)
    std::string mode;     // 100644, 100755 or 120000
    std::string oid;      // blob id, all zeros for a file that did not exist
  };
  std::string file_diff(size_t id) const;

  std::map<std::string, size_t> by_path_;  // current external path -> internal id
  std::vector<Baseline> baselines_;        // by internal id
  std::vector<std::string> current_;       // by internal id: current external path (renames)
};

}  // namespace llmx::patch
