// Unit tests for finding the `.git` entries below a writable root (sandbox/git_dirs.hpp): what is
// found, the walk's order and limits, and that a cached rescan sees every change.
#include "sandbox/git_dirs.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
namespace fs = std::filesystem;

namespace {

// The .git paths of `names` below dir, sorted ("" is the root).
std::vector<std::string> under(const test::ScratchDir& dir, std::vector<std::string> names) {
  for (auto& n : names) n = n.empty() ? dir.path() + "/.git" : dir.at(n) + "/.git";
  std::sort(names.begin(), names.end());
  return names;
}

// A scan's answer, sorted: sibling directories come in the order the file system lists them.
std::vector<std::string> scan(const std::string& root, sandbox::GitScanLimits limits = {}) {
  auto found = sandbox::find_git_entries(root, limits);
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

TEST_CASE("git dirs: the root's, nested repositories' and submodule gitlinks, in walk order") {
  test::ScratchDir dir;
  fs::create_directories(dir.at(".git/modules/sub/.git"));  // inside .git: never entered
  dir.write("a/.git/config", "[core]\n");
  dir.write("a/deep/er/.git/HEAD", "ref: refs/heads/main\n");
  dir.write("b/sub/.git", "gitdir: ../../.git/modules/sub\n");  // a submodule's gitlink file
  fs::create_directories(dir.at("c/empty"));
  fs::create_directory_symlink(dir.at("a"), dir.at("link"));  // symlinks are not followed
  CHECK(scan(dir.path()) == under(dir, {"", "a", "a/deep/er", "b/sub"}));
  // Pre-order: a directory's own .git comes before anything below it.
  auto again = sandbox::find_git_entries(dir.path());
  REQUIRE(again.size() == 4);
  CHECK(again.front() == dir.path() + "/.git");
  CHECK(std::find(again.begin(), again.end(), dir.at("a") + "/.git") <
        std::find(again.begin(), again.end(), dir.at("a/deep/er") + "/.git"));
}

TEST_CASE("git dirs: a rescan sees repositories added and removed since the last one") {
  test::ScratchDir dir;
  fs::create_directories(dir.at("x/y/z"));
  fs::create_directories(dir.at("gone/w/.git"));
  CHECK(scan(dir.path()) == under(dir, {"gone/w"}));
  fs::remove_all(dir.at("gone"));
  CHECK(scan(dir.path()).empty());
  dir.write("x/.git", "gitdir: elsewhere\n");
  CHECK(scan(dir.path()) == under(dir, {"x"}));
  // A directory replaced by another of the same name is listed again.
  fs::remove_all(dir.at("x/y"));
  fs::create_directories(dir.at("x/y/q/.git"));
  CHECK(scan(dir.path()) == under(dir, {"x", "x/y/q"}));
  // Unchanged: the same answer from the cache.
  CHECK(scan(dir.path()) == under(dir, {"x", "x/y/q"}));
}

TEST_CASE("git dirs: a change within the file system's clock tick of the last listing is seen") {
  // A directory's mtime has the file system's coarse clock: an entry added in the same tick as
  // the listing leaves the mtime as it was. Played here by putting the mtime back after the
  // change; the mtime is set ahead of the clock so that a slow machine cannot age it.
  test::ScratchDir dir;
  fs::create_directories(dir.at("fresh"));
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const timespec times[2] = {now, {now.tv_sec + 10, now.tv_nsec}};
  auto set_times = [&] { REQUIRE(::utimensat(AT_FDCWD, dir.at("fresh").c_str(), times, 0) == 0); };
  set_times();
  CHECK(scan(dir.path()).empty());
  fs::create_directories(dir.at("fresh/.git"));
  set_times();
  CHECK(scan(dir.path()) == under(dir, {"fresh"}));
}

TEST_CASE("git dirs: a listing older than the clock tick is what a rescan reads, until its directory changes") {
  test::ScratchDir dir;
  fs::create_directories(dir.at("old/y"));
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  auto set_mtime = [&](const std::string& name, time_t ago) {
    const timespec t{now.tv_sec - ago, 0};
    const timespec times[2] = {t, t};
    REQUIRE(::utimensat(AT_FDCWD, (name.empty() ? dir.path() : dir.at(name)).c_str(), times, 0) == 0);
  };
  for (const char* name : {"", "old", "old/y"}) set_mtime(name, 60);
  CHECK(scan(dir.path()).empty());
  // A change that leaves every mtime as it was goes unseen: the rescan read the cache, one stat
  // per directory (the file system's own clock never allows this, see the case above).
  fs::create_directories(dir.at("old/y/.git"));
  set_mtime("old/y", 60);
  CHECK(scan(dir.path()).empty());
  // The mtime moved: read again.
  set_mtime("old/y", 59);
  CHECK(scan(dir.path()) == under(dir, {"old/y"}));
  // Replaced by another directory (another inode) with the old mtimes: read again.
  fs::create_directories(dir.at("old/y2/z/.git"));
  fs::remove_all(dir.at("old/y"));
  fs::rename(dir.at("old/y2"), dir.at("old/y"));
  set_mtime("old", 60);
  set_mtime("old/y", 59);
  CHECK(scan(dir.path()) == under(dir, {"old/y/z"}));
}

TEST_CASE("git dirs: depth and directory limits") {
  test::ScratchDir dir;
  fs::create_directories(dir.at("1/2/3/.git"));
  fs::create_directories(dir.at("1/2/3/4/5/.git"));
  CHECK(scan(dir.path(), {.max_depth = 5}) == under(dir, {"1/2/3", "1/2/3/4/5"}));
  CHECK(scan(dir.path(), {.max_depth = 4}) == under(dir, {"1/2/3"}));
  CHECK(scan(dir.path(), {.max_depth = 2}).empty());
  // The limit counts directories visited, the root first: root, 1, 1/2, 1/2/3.
  CHECK(scan(dir.path(), {.max_depth = 12, .max_directories = 4}) == under(dir, {"1/2/3"}));
  CHECK(scan(dir.path()) == under(dir, {"1/2/3", "1/2/3/4/5"}));
  // A root that is not a directory has none.
  dir.write("file", "x");
  CHECK(scan(dir.at("file")).empty());
  CHECK(scan(dir.at("missing")).empty());
}
