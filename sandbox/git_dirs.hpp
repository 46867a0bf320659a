// Finding every `.git` below a writable root: the root's own, nested repositories' and
// submodules' (whose `.git` is a file naming the real directory). The sandbox mounts each one
// read-only, so a command cannot plant hooks or rewrite `gitdir:` pointers that the user's own
// git would later follow.
#pragma once

#include <string>
#include <vector>

namespace llmx::sandbox {

struct GitScanLimits {
  int max_depth = 12;            // directory levels below the root
  size_t max_directories = 200000;  // per root and scan
};

// Absolute paths of the `.git` entries below `root` (itself included), in walk order. Symlinks
// are not followed and `.git` directories are not entered. Thread-safe. Each directory's listing
// is cached by (inode, mtime), so a repeated scan of an unchanged tree costs one stat per
// directory.
std::vector<std::string> find_git_entries(const std::string& root, const GitScanLimits& limits = {});

}  // namespace llmx::sandbox
