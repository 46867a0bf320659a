// Unit tests for reading git facts from repository files (no git process): branch, commit from
// loose refs and packed-refs, detached and unborn HEADs, linked worktrees, the origin url.
#include "protocol/workspace/git_info.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
namespace fs = std::filesystem;

namespace {

const std::string kSha1(40, 'a');
const std::string kSha2 = std::string(39, 'b') + "2";
const std::string kSha3 = std::string(39, 'c') + "3";

void make_repo(const test::ScratchDir& dir, const std::string& config) {
  dir.write("repo/.git/HEAD", "ref: refs/heads/main\n");
  dir.write("repo/.git/refs/heads/main", kSha1 + "\n");
  dir.write("repo/.git/config", config);
  fs::create_directories(dir.at("repo/src/deep"));
}

const char* kConfig =
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    "[remote \"upstream\"]\n\turl = https://example.com/upstream.git\n"
    "[remote \"origin\"]\n\tURL = git@github.com:me/project.git  # mine\n"
    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    "[branch \"main\"]\n\tremote = origin\n";

}  // namespace

TEST_CASE("git info: branch, loose ref and origin url, from a subdirectory") {
  test::ScratchDir dir;
  make_repo(dir, kConfig);
  for (const char* sub : {"repo", "repo/src/deep", "repo/src/deep/"}) {
    CAPTURE(sub);
    auto info = read_git_info(dir.at(sub));
    REQUIRE(info);
    CHECK(info->branch == "main");
    CHECK(info->commit_hash == kSha1);
    CHECK(info->repository_url == "git@github.com:me/project.git");
  }
}

TEST_CASE("git info: packed refs, detached and unborn HEADs, no origin") {
  test::ScratchDir dir;
  make_repo(dir, "[remote.origin]\n\turl = \"https://example.com/old style.git\"\n");
  CHECK(read_git_info(dir.at("repo"))->repository_url == "https://example.com/old style.git");

  dir.remove("repo/.git/refs/heads/main");
  dir.write("repo/.git/packed-refs", "# pack-refs with: peeled fully-peeled sorted\n" + kSha3 +
                                         " refs/heads/other\n" + kSha2 + " refs/heads/main\n^" + kSha3 + "\n");
  auto info = read_git_info(dir.at("repo/src"));
  REQUIRE(info);
  CHECK(info->branch == "main");
  CHECK(info->commit_hash == kSha2);

  dir.write("repo/.git/HEAD", kSha3 + "\n");
  info = read_git_info(dir.at("repo"));
  REQUIRE(info);
  CHECK_FALSE(info->branch);
  CHECK(info->commit_hash == kSha3);

  dir.write("repo/.git/HEAD", "ref: refs/heads/fresh\n");
  dir.write("repo/.git/config", "[core]\n\tbare = false\n");
  info = read_git_info(dir.at("repo"));
  REQUIRE(info);
  CHECK(info->branch == "fresh");
  CHECK_FALSE(info->commit_hash);
  CHECK_FALSE(info->repository_url);
}

TEST_CASE("git info: a linked worktree reads refs and config from the common dir") {
  test::ScratchDir dir;
  make_repo(dir, kConfig);
  dir.write("repo/.git/refs/heads/feature", kSha2 + "\n");
  dir.write("repo/.git/worktrees/wt/HEAD", "ref: refs/heads/feature\n");
  dir.write("repo/.git/worktrees/wt/commondir", "../..\n");
  dir.write("wt/.git", "gitdir: ../repo/.git/worktrees/wt\n");
  auto info = read_git_info(dir.at("wt"));
  REQUIRE(info);
  CHECK(info->branch == "feature");
  CHECK(info->commit_hash == kSha2);
  CHECK(info->repository_url == "git@github.com:me/project.git");
}

TEST_CASE("git info: outside a repository") {
  test::ScratchDir dir;
  fs::create_directories(dir.at("plain/sub"));
  CHECK_FALSE(read_git_info(dir.at("plain/sub")));
  dir.write("broken/.git/config", "");  // a .git without HEAD is not a repository
  CHECK_FALSE(read_git_info(dir.at("broken")));
}

TEST_CASE("git info: agrees with git itself when git is installed") {
  if (std::system("command -v git >/dev/null 2>&1") != 0) return;
  test::ScratchDir dir;
  std::string r = dir.at("real");
  std::string cmd = "git init -q -b trunk " + r + " && cd " + r +
                    " && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x"
                    " && git remote add origin https://example.com/real.git"
                    " && git rev-parse HEAD > " + dir.at("head.txt") + " && git pack-refs --all";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::string expected = *dir.read("head.txt");
  expected.resize(expected.find_last_not_of("\n") + 1);
  auto info = read_git_info(r);
  REQUIRE(info);
  CHECK(info->branch == "trunk");
  CHECK(info->commit_hash == expected);
  CHECK(info->repository_url == "https://example.com/real.git");
}
