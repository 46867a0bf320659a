// Unit tests for AGENTS.md loading (engine.md §1.4): git root detection, per-directory choice,
// fallback names, the byte budget, whitespace-only files, global + project combination, and the
// user message it becomes in the initial context (§1.3).
#include "protocol/config/project_doc.hpp"

#include <doctest/doctest.h>

#include <filesystem>

#include "protocol/model/environment_context.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using namespace llmx::project_doc;
using llmx::test::ScratchDir;
namespace fs = std::filesystem;

namespace {
std::string canon(const std::string& p) { return fs::canonical(p).string(); }
}  // namespace

TEST_CASE("project_doc: git root is the nearest directory with .git, file or directory") {
  ScratchDir dir;
  dir.write("repo/a/b/keep", "");
  fs::create_directories(dir.at("repo/.git"));
  CHECK(find_git_root(dir.at("repo/a/b")) == std::optional<std::string>(canon(dir.at("repo"))));
  CHECK(find_git_root(dir.at("repo")) == std::optional<std::string>(canon(dir.at("repo"))));
  dir.write("repo/a/.git", "gitdir: elsewhere\n");  // a submodule or worktree marker
  CHECK(find_git_root(dir.at("repo/a/b")) == std::optional<std::string>(canon(dir.at("repo/a"))));
  dir.write("plain/x/keep", "");
  CHECK_FALSE(find_git_root(dir.at("plain/x")).has_value());
}

TEST_CASE("project_doc: a worktree's main repository") {
  ScratchDir dir;
  dir.write("wt/.git", "gitdir: /src/main/.git/worktrees/wt\n");
  CHECK(main_repository_root(dir.at("wt")) == std::optional<std::string>("/src/main"));
  dir.write("sub/.git", "gitdir: ../main/.git/modules/sub\n");
  CHECK_FALSE(main_repository_root(dir.at("sub")).has_value());
  fs::create_directories(dir.at("plain/.git"));
  CHECK_FALSE(main_repository_root(dir.at("plain")).has_value());
}

TEST_CASE("project_doc: search directories run from the git root down to cwd") {
  ScratchDir dir;
  dir.write("repo/a/b/keep", "");
  fs::create_directories(dir.at("repo/.git"));
  std::string root = canon(dir.at("repo"));
  CHECK(search_dirs(dir.at("repo/a/b")) == std::vector<std::string>{root, root + "/a", root + "/a/b"});
  dir.write("loose/keep", "");
  CHECK(search_dirs(dir.at("loose")) == std::vector<std::string>{canon(dir.at("loose"))});
}

TEST_CASE("project_doc: one file per directory, override first, then AGENTS.md, then fallbacks") {
  CHECK(candidate_names({" CLAUDE.md ", "", "AGENTS.md", "CLAUDE.md", "  "}) ==
        std::vector<std::string>{"AGENTS.override.md", "AGENTS.md", "CLAUDE.md"});
  ScratchDir dir;
  fs::create_directories(dir.at("repo/.git"));
  std::string root = canon(dir.at("repo"));
  dir.write("repo/AGENTS.md", "root doc");
  dir.write("repo/AGENTS.override.md", "root override");
  dir.write("repo/a/CLAUDE.md", "fallback doc");
  fs::create_directories(dir.at("repo/a/b/AGENTS.md"));  // a directory does not count
  dir.write("repo/a/b/target.md", "linked doc");
  fs::create_symlink(dir.at("repo/a/b/target.md"), dir.at("repo/a/b/AGENTS.override.md"));
  CHECK(discover(dir.at("repo/a/b"), {"CLAUDE.md"}) == std::vector<std::string>{root + "/AGENTS.override.md",
                                                                                root + "/a/CLAUDE.md",
                                                                                root + "/a/b/AGENTS.override.md"});
  CHECK(discover(dir.at("repo/a/b"), {}) ==
        std::vector<std::string>{root + "/AGENTS.override.md", root + "/a/b/AGENTS.override.md"});
  CHECK(read_project_docs(dir.at("repo/a/b"), 32768, {"CLAUDE.md"}) ==
        std::optional<std::string>("root override\n\nfallback doc\n\nlinked doc"));
}

TEST_CASE("project_doc: the byte budget is shared and whitespace-only files are skipped") {
  ScratchDir dir;
  fs::create_directories(dir.at("repo/.git"));
  dir.write("repo/AGENTS.md", "0123456789\n");  // 11 bytes, kept untrimmed
  dir.write("repo/a/AGENTS.md", "  \n\t\n");    // skipped, uses no budget
  dir.write("repo/a/b/AGENTS.md", "abcdefghij");
  std::string cwd = dir.at("repo/a/b");
  CHECK(read_project_docs(cwd, 32768, {}) == std::optional<std::string>("0123456789\n\n\nabcdefghij"));
  CHECK(read_project_docs(cwd, 15, {}) == std::optional<std::string>("0123456789\n\n\nabcd"));
  CHECK(read_project_docs(cwd, 11, {}) == std::optional<std::string>("0123456789\n"));
  CHECK(read_project_docs(cwd, 4, {}) == std::optional<std::string>("0123"));
  CHECK_FALSE(read_project_docs(cwd, 0, {}).has_value());
  dir.write("repo/AGENTS.md", "é");  // cut inside a character: replaced, not dropped
  CHECK(read_project_docs(cwd, 1, {}) == std::optional<std::string>("\xEF\xBF\xBD"));
}

TEST_CASE("project_doc: lossy UTF-8") {
  CHECK(utf8_lossy("plain ü") == "plain ü");
  CHECK(utf8_lossy("a\xFF"
                   "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(utf8_lossy("\xE2\x82") == "\xEF\xBF\xBD");                              // truncated: one replacement
  CHECK(utf8_lossy("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong: two
  CHECK(utf8_lossy("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST_CASE("project_doc: global doc, project docs and their combination") {
  ScratchDir home, work;
  fs::create_directories(work.at("repo/.git"));
  std::string cwd = work.at("repo");
  CHECK_FALSE(user_instructions(home.path(), cwd, 32768, {}).has_value());
  home.write("AGENTS.override.md", " \n ");  // whitespace only: the next name is used
  home.write("AGENTS.md", "\n  be brief  \n");
  CHECK(read_global(home.path()) == std::optional<std::string>("be brief"));
  CHECK(user_instructions(home.path(), cwd, 32768, {}) == std::optional<std::string>("be brief"));
  work.write("repo/AGENTS.md", "  use tabs\n");
  CHECK(user_instructions(home.path(), cwd, 32768, {}) ==
        std::optional<std::string>("be brief\n\n--- project-doc ---\n\n  use tabs\n"));
  CHECK(user_instructions(home.path(), cwd, 0, {}) == std::optional<std::string>("be brief"));
  home.remove("AGENTS.md");
  CHECK(user_instructions(home.path(), cwd, 32768, {}) == std::optional<std::string>("  use tabs\n"));
}

TEST_CASE("project_doc: the user message and its place in the initial context") {
  CHECK(instructions_message("/w", "do X") ==
        "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\ndo X\n</INSTRUCTIONS>");
  Config cfg;
  cfg.cwd = "/w";
  cfg.developer_instructions = "dev";
  cfg.user_instructions = "do X";
  auto items = initial_context(cfg);
  REQUIRE(items.size() == 3);
  auto* dev = items[0].get_if<MessageItem>();
  auto* agents = items[1].get_if<MessageItem>();
  auto* env = items[2].get_if<MessageItem>();
  REQUIRE((dev && agents && env));
  CHECK(dev->role == "developer");
  CHECK(agents->role == "user");
  CHECK(agents->text() == "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\ndo X\n</INSTRUCTIONS>");
  CHECK(env->text().starts_with("<environment_context>"));
  cfg.user_instructions.reset();
  CHECK(initial_context(cfg).size() == 2);
}
