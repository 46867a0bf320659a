#include "sandbox/git_dirs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace llmx::sandbox {
namespace {

struct Listing {
  dev_t dev = 0;
  ino_t ino = 0;
  timespec mtime{};
  std::vector<std::string> subdirs;  // names of real directories other than .git
  bool has_git = false;              // a `.git` directory or file
};

struct RootCache {
  std::mutex mu;
  std::unordered_map<std::string, Listing> dirs;  // by absolute path
};

RootCache& cache_for(const std::string& root) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<RootCache>> caches;
  std::lock_guard lock(mu);
  auto& c = caches[root];
  if (!c) c = std::make_unique<RootCache>();
  return *c;
}

bool same(const Listing& l, const struct stat& st) {
  return l.dev == st.st_dev && l.ino == st.st_ino && l.mtime.tv_sec == st.st_mtim.tv_sec &&
         l.mtime.tv_nsec == st.st_mtim.tv_nsec;
}

// Reads one directory; false when it cannot be opened (permissions, vanished).
bool list(const std::string& path, const struct stat& st, Listing& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return false;
  }
  out = Listing{st.st_dev, st.st_ino, st.st_mtim, {}, false};
  while (dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat est {};
      if (::fstatat(fd, e->d_name, &est, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISDIR(est.st_mode) ? DT_DIR : S_ISREG(est.st_mode) ? DT_REG : DT_LNK;
    }
    if (name == ".git") {
      out.has_git = type == DT_DIR || type == DT_REG;
    } else if (type == DT_DIR) {
      out.subdirs.emplace_back(name);
    }
  }
  ::closedir(dir);
  return true;
}

}  // namespace

std::vector<std::string> find_git_entries(const std::string& root, const GitScanLimits& limits) {
  std::vector<std::string> found;
  RootCache& cache = cache_for(root);
  std::lock_guard lock(cache.mu);
  std::unordered_map<std::string, Listing> seen;  // replaces the cache: vanished dirs drop out
  std::vector<std::pair<std::string, int>> stack{{root, 0}};
  size_t scanned = 0;
  while (!stack.empty() && scanned < limits.max_directories) {
    auto [path, depth] = std::move(stack.back());
    stack.pop_back();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    ++scanned;
    Listing listing;
    auto it = cache.dirs.find(path);
    if (it != cache.dirs.end() && same(it->second, st))
      listing = std::move(it->second);
    else if (!list(path, st, listing))
      continue;
    if (listing.has_git) found.push_back(path == "/" ? "/.git" : path + "/.git");
    if (depth < limits.max_depth)
      for (auto n = listing.subdirs.rbegin(); n != listing.subdirs.rend(); ++n)
        stack.emplace_back(path == "/" ? "/" + *n : path + "/" + *n, depth + 1);
    seen.emplace(std::move(path), std::move(listing));
  }
  cache.dirs = std::move(seen);
  return found;
}

}  // namespace llmx::sandbox
