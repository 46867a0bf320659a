// Unit tests for the turn diff tracker (engine.md §8.6): baselines, git-style output for add,
// modify, delete, rename, mode changes and binary files, path display and ordering, and the
// local SHA-1 / git blob ids.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sandbox/apply_patch.hpp"
#include "test/support/unit_temp_dir.hpp"
#include "sandbox/turn_diff.hpp"

using namespace llmx;
using namespace llmx::patch;

namespace {

struct TempDir : llmx::test::TempDir {
  TempDir() : llmx::test::TempDir("llmx_turn_diff") {}
};

// A directory that looks like a git work tree (the tracker only checks for `.git`).
struct Repo : TempDir {
  Repo() { std::filesystem::create_directories(at(".git")); }
};

const std::string kZero = "0000000000000000000000000000000000000000";

std::map<std::string, FileChange> add(const std::string& p) { return {{p, FileChange{FileAdd{}}}}; }
std::map<std::string, FileChange> del(const std::string& p) { return {{p, FileChange{FileDelete{}}}}; }
std::map<std::string, FileChange> upd(const std::string& p) { return {{p, FileChange{FileUpdate{}}}}; }
std::map<std::string, FileChange> mv(const std::string& from, const std::string& to) {
  FileUpdate u;
  u.move_path = to;
  return {{from, FileChange{u}}};
}

}  // namespace

TEST_CASE("patch turn diff: git blob ids") {
  CHECK(git_blob_oid("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  CHECK(git_blob_oid("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST_CASE("patch turn diff: nothing touched or nothing changed gives an empty diff") {
  Repo r;
  TurnDiffTracker t;
  CHECK(t.unified_diff() == "");
  r.write("same.txt", "x\n");
  t.on_patch_begin(upd(r.at("same.txt")));
  CHECK(t.unified_diff() == "");
}

TEST_CASE("patch turn diff: an added file") {
  Repo r;
  TurnDiffTracker t;
  t.on_patch_begin(add(r.at("new.txt")));
  r.write("new.txt", "hello\n");
  CHECK(t.unified_diff() ==
        "diff --git a/new.txt b/new.txt\n"
        "new file mode 100644\n"
        "index " + kZero + "..ce013625030ba8dba906f756967f9e9ca394464a\n"
        "--- /dev/null\n"
        "+++ b/new.txt\n"
        "@@ -0,0 +1 @@\n"
        "+hello\n");
}

TEST_CASE("patch turn diff: a modified file in a subdirectory, 3 lines of context") {
  Repo r;
  std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string after = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
  r.write("src/f.txt", before);
  TurnDiffTracker t;
  t.on_patch_begin(upd(r.at("src/f.txt")));
  r.write("src/f.txt", after);
  CHECK(t.unified_diff() ==
        "diff --git a/src/f.txt b/src/f.txt\n"
        "index " + git_blob_oid(before) + ".." + git_blob_oid(after) + "\n"
        "--- a/src/f.txt\n"
        "+++ b/src/f.txt\n"
        "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
}

TEST_CASE("patch turn diff: a deleted file") {
  Repo r;
  r.write("gone.txt", "bye\n");
  TurnDiffTracker t;
  t.on_patch_begin(del(r.at("gone.txt")));
  r.remove("gone.txt");
  CHECK(t.unified_diff() ==
        "diff --git a/gone.txt b/gone.txt\n"
        "deleted file mode 100644\n"
        "index " + git_blob_oid("bye\n") + ".." + kZero + "\n"
        "--- a/gone.txt\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-bye\n");
}

TEST_CASE("patch turn diff: a rename with a change is shown from the old to the new path") {
  Repo r;
  r.write("old.txt", "a\nb\n");
  TurnDiffTracker t;
  t.on_patch_begin(mv(r.at("old.txt"), r.at("dir/new.txt")));
  r.remove("old.txt");
  r.write("dir/new.txt", "a\nc\n");
  CHECK(t.unified_diff() ==
        "diff --git a/old.txt b/dir/new.txt\n"
        "index " + git_blob_oid("a\nb\n") + ".." + git_blob_oid("a\nc\n") + "\n"
        "--- a/old.txt\n"
        "+++ b/dir/new.txt\n"
        "@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
  // A later patch on the destination keeps the original baseline.
  t.on_patch_begin(upd(r.at("dir/new.txt")));
  r.write("dir/new.txt", "a\nd\n");
  CHECK(t.unified_diff().find("diff --git a/old.txt b/dir/new.txt\n") == 0);
  CHECK(t.unified_diff().find("\n-b\n+d\n") != std::string::npos);
}

TEST_CASE("patch turn diff: baselines are taken once, files sorted by path") {
  Repo r;
  r.write("b.txt", "b1\n");
  r.write("a.txt", "a1\n");
  TurnDiffTracker t;
  t.on_patch_begin(upd(r.at("b.txt")));
  r.write("b.txt", "b2\n");
  // Seen again after the first change: the baseline stays b1.
  t.on_patch_begin(upd(r.at("b.txt")));
  t.on_patch_begin(upd(r.at("a.txt")));
  r.write("b.txt", "b3\n");
  r.write("a.txt", "a2\n");
  std::string diff = t.unified_diff();
  size_t a = diff.find("diff --git a/a.txt"), b = diff.find("diff --git a/b.txt");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(a == 0);
  CHECK(a < b);
  CHECK(diff.find("-b1\n+b3\n") != std::string::npos);
}

TEST_CASE("patch turn diff: an unchanged first file leaves a leading newline (reference quirk)") {
  Repo r;
  r.write("a.txt", "same\n");
  r.write("b.txt", "old\n");
  TurnDiffTracker t;
  std::map<std::string, FileChange> both = upd(r.at("a.txt"));
  both.merge(upd(r.at("b.txt")));
  t.on_patch_begin(both);
  r.write("b.txt", "new\n");
  CHECK(t.unified_diff().rfind("\ndiff --git a/b.txt b/b.txt\n", 0) == 0);
}

TEST_CASE("patch turn diff: mode changes and executable files") {
  Repo r;
  r.write("run.sh", "echo 1\n");
  TurnDiffTracker t;
  t.on_patch_begin(upd(r.at("run.sh")));
  r.write("run.sh", "echo 2\n");
  REQUIRE(::chmod(r.at("run.sh").c_str(), 0755) == 0);
  std::string diff = t.unified_diff();
  CHECK(diff.rfind("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\nindex ", 0) == 0);

  t.on_patch_begin(add(r.at("tool")));
  r.write("tool", "#!/bin/sh\n");
  REQUIRE(::chmod(r.at("tool").c_str(), 0755) == 0);
  CHECK(t.unified_diff().find("diff --git a/tool b/tool\nnew file mode 100755\n") != std::string::npos);
}

TEST_CASE("patch turn diff: symlinks use the link target as content") {
  Repo r;
  r.write("target.txt", "t\n");
  TurnDiffTracker t;
  t.on_patch_begin(add(r.at("link")));
  std::filesystem::create_symlink("target.txt", r.at("link"));
  CHECK(t.unified_diff() ==
        "diff --git a/link b/link\nnew file mode 120000\nindex " + kZero + ".." +
            git_blob_oid("target.txt") +
            "\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+target.txt\n\\ No newline at end of file\n");
}

TEST_CASE("patch turn diff: binary content") {
  Repo r;
  std::string bin("\x89PNG\x00\xff", 6);
  r.write("img.png", bin);
  TurnDiffTracker t;
  t.on_patch_begin(upd(r.at("img.png")));
  r.write("img.png", bin + "x");
  CHECK(t.unified_diff() ==
        "diff --git a/img.png b/img.png\nindex " + git_blob_oid(bin) + ".." + git_blob_oid(bin + "x") +
            "\n--- a/img.png\n+++ b/img.png\nBinary files differ\n");
}

TEST_CASE("patch turn diff: outside a git work tree the path is shown as given") {
  TempDir d;  // under /tmp, no .git above it
  TurnDiffTracker t;
  t.on_patch_begin(add(d.at("x.txt")));
  d.write("x.txt", "x\n");
  CHECK(t.unified_diff().rfind("diff --git a/" + d.at("x.txt") + " b/" + d.at("x.txt") + "\n", 0) == 0);
  CHECK(t.unified_diff().find("+++ b/" + d.at("x.txt") + "\n") != std::string::npos);
}

TEST_CASE("patch turn diff: a .git file (worktree or submodule) also marks the root") {
  TempDir d;
  d.write("repo/.git", "gitdir: /elsewhere\n");
  TurnDiffTracker t;
  t.on_patch_begin(add(d.at("repo/sub/f.txt")));
  d.write("repo/sub/f.txt", "x\n");
  CHECK(t.unified_diff().rfind("diff --git a/sub/f.txt b/sub/f.txt\n", 0) == 0);
}
