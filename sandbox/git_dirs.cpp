#include "sandbox/git_dirs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace llmx::sandbox {
namespace {

// A directory's mtime can stay the same across a change made within the same clock tick of the
// file system (a few ms); a listing taken that close to the mtime is read again the next time.
constexpr int64_t kRacyNanos = 50'000'000;

int64_t nanos(const timespec& t) { return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

struct Listing {
  dev_t dev = 0;
  ino_t ino = 0;
  timespec mtime{};
  bool trusted = false;              // the mtime was older than the listing by kRacyNanos
  bool has_git = false;              // a `.git` directory or file
  uint64_t scan = 0;                 // the last scan that reached it
  std::vector<std::string> subdirs;  // names of real directories other than .git
};

// One root's listings, and the walk's buffers: a scan of an unchanged tree allocates nothing but
// its answer.
struct RootCache {
  struct Frame {
    const Listing* dir;
    size_t next;      // index of the next subdirectory to visit
    size_t path_len;  // the directory's path is path[0, path_len)
    int depth;
  };
  std::mutex mu;
  uint64_t scans = 0;
  std::unordered_map<std::string, Listing> dirs;  // by absolute path
  std::string path;
  std::vector<Frame> frames;
};

RootCache& cache_for(const std::string& root) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<RootCache>> caches;
  std::lock_guard lock(mu);
  auto& c = caches[root];
  if (!c) c = std::make_unique<RootCache>();
  return *c;
}

bool unchanged(const Listing& l, const struct stat& st) {
  return l.trusted && l.dev == st.st_dev && l.ino == st.st_ino && l.mtime.tv_sec == st.st_mtim.tv_sec &&
         l.mtime.tv_nsec == st.st_mtim.tv_nsec;
}

// Reads one directory into `out`; false when it cannot be opened (permissions, vanished).
bool list(const std::string& path, const struct stat& st, Listing& out) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return false;
  }
  out.dev = st.st_dev;
  out.ino = st.st_ino;
  out.mtime = st.st_mtim;
  out.trusted = nanos(now) - nanos(st.st_mtim) > kRacyNanos;
  out.has_git = false;
  out.subdirs.clear();
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

// The listing of the directory at c.path, read again when it changed; null when it is not a
// directory or cannot be read.
const Listing* visit(RootCache& c, uint64_t scan) {
  struct stat st {};
  if (::lstat(c.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return nullptr;
  Listing& l = c.dirs.try_emplace(c.path).first->second;  // copies the path only when it is new
  if (!unchanged(l, st) && !list(c.path, st, l)) return nullptr;  // left unmarked: dropped below
  l.scan = scan;
  return &l;
}

}  // namespace

std::vector<std::string> find_git_entries(const std::string& root, const GitScanLimits& limits) {
  std::vector<std::string> found;
  RootCache& c = cache_for(root);
  std::lock_guard lock(c.mu);
  const uint64_t scan = ++c.scans;
  size_t scanned = 0;
  auto enter = [&](int depth) {
    const Listing* l = visit(c, scan);
    if (!l) return;  // only the directories read count against the limit
    ++scanned;
    if (l->has_git) found.push_back(c.path == "/" ? "/.git" : c.path + "/.git");
    c.frames.push_back({l, 0, c.path.size(), depth});
  };
  c.path = root;
  c.frames.clear();
  enter(0);
  // Depth first, each directory's subdirectories in listing order.
  while (!c.frames.empty() && scanned < limits.max_directories) {
    auto& f = c.frames.back();
    if (f.depth >= limits.max_depth || f.next == f.dir->subdirs.size()) {
      c.frames.pop_back();
      continue;
    }
    const std::string& name = f.dir->subdirs[f.next++];
    const int depth = f.depth + 1;
    c.path.resize(f.path_len);
    if (c.path != "/") c.path += '/';
    c.path += name;
    enter(depth);
  }
  // What this scan did not reach (vanished, unreadable, past the limits) is forgotten.
  std::erase_if(c.dirs, [scan](const auto& entry) { return entry.second.scan != scan; });
  return found;
}

}  // namespace llmx::sandbox
