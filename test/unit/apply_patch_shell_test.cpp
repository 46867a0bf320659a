// Unit tests for recognising apply_patch in shell calls (engine.md §5.3 point 3, §8.5): the
// accepted argv shapes, the effective cwd after `cd`, error texts, and shapes that must run as
// ordinary commands.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sandbox/apply_patch.hpp"

using namespace llmx::patch;
using InterceptKind = Intercept::Kind;

namespace {

const std::string kPatch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** End Patch";
const std::string kCwd = "/work/proj";

Intercept bash(const std::string& script) { return intercept_shell({"bash", "-lc", script}, kCwd); }

void check_patch(const Intercept& r, const std::string& cwd) {
  REQUIRE_MESSAGE(r.kind == InterceptKind::patch, r.error);
  CHECK(r.cwd == cwd);
  REQUIRE(r.patch.hunks.size() == 1);
  CHECK(r.patch.hunks[0].path == "hello.txt");
  CHECK(r.patch.text == kPatch);
}

}  // namespace

TEST_CASE("patch shell: direct apply_patch and applypatch invocations") {
  check_patch(intercept_shell({"apply_patch", kPatch}, kCwd), kCwd);
  check_patch(intercept_shell({"applypatch", kPatch + "\n"}, kCwd), kCwd);
  // The lenient parser also unwraps a heredoc passed as the argument.
  check_patch(intercept_shell({"apply_patch", "<<'EOF'\n" + kPatch + "\nEOF\n"}, kCwd), kCwd);
}

TEST_CASE("patch shell: bash -lc heredoc forms") {
  check_patch(bash("apply_patch <<'EOF'\n" + kPatch + "\nEOF\n"), kCwd);
  check_patch(bash("apply_patch <<EOF\n" + kPatch + "\nEOF"), kCwd);
  check_patch(bash("applypatch <<\"PATCH\"\n" + kPatch + "\n\n\nPATCH\n"), kCwd);
  check_patch(bash("\n  apply_patch<<'EOF'  \n" + kPatch + "\nEOF\n\n"), kCwd);
  check_patch(bash("apply_patch <<-EOF\n" + kPatch + "\n\t\tEOF\n"), kCwd);
}

TEST_CASE("patch shell: cd <dir> && apply_patch sets the effective cwd") {
  std::string heredoc = " <<'EOF'\n" + kPatch + "\nEOF\n";
  check_patch(bash("cd sub/dir && apply_patch" + heredoc), kCwd + "/sub/dir");
  check_patch(bash("cd /abs/dir && apply_patch" + heredoc), "/abs/dir");
  check_patch(bash("cd 'with space' && apply_patch" + heredoc), kCwd + "/with space");
  check_patch(bash("cd \"quoted\" &&\napply_patch" + heredoc), kCwd + "/quoted");
  check_patch(bash("cd .. && applypatch" + heredoc), kCwd + "/..");
}

TEST_CASE("patch shell: parse errors become verification failures") {
  Intercept r = intercept_shell({"apply_patch", "bad"}, kCwd);
  CHECK(r.kind == InterceptKind::error);
  CHECK(r.error ==
        "apply_patch verification failed: invalid patch: The first line of the patch must be "
        "'*** Begin Patch'");
  Intercept h = bash("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x\n*** End Patch\nEOF");
  CHECK(h.kind == InterceptKind::error);
  CHECK(h.error ==
        "apply_patch verification failed: invalid hunk at line 2, Update file hunk for path 'x' "
        "is empty");
}

TEST_CASE("patch shell: a raw patch without apply_patch is reported") {
  const std::string msg =
      "apply_patch verification failed: patch detected without explicit call to apply_patch. "
      "Rerun as [\"apply_patch\", \"<patch>\"]";
  Intercept a = intercept_shell({kPatch}, kCwd);
  CHECK(a.kind == InterceptKind::error);
  CHECK(a.error == msg);
  Intercept b = bash(kPatch);
  CHECK(b.kind == InterceptKind::error);
  CHECK(b.error == msg);
}

TEST_CASE("patch shell: other shapes run as ordinary commands") {
  std::string heredoc = "<<'EOF'\n" + kPatch + "\nEOF\n";
  std::vector<std::vector<std::string>> cases = {
      {"ls", "-la"},
      {"apply_patch"},
      {"apply_patch", kPatch, "extra"},
      {"bash", "-c", "apply_patch " + heredoc},
      {"/bin/bash", "-lc", "apply_patch " + heredoc},
      {"zsh", "-lc", "apply_patch " + heredoc},
      {"bash", "-lc", "echo hi"},
      {"bash", "-lc", "apply_patch " + heredoc + "echo done\n"},
      {"bash", "-lc", "echo x && apply_patch " + heredoc},
      {"bash", "-lc", "cd a b && apply_patch " + heredoc},
      {"bash", "-lc", "cd a; apply_patch " + heredoc},
      {"bash", "-lc", "cd $HOME && apply_patch " + heredoc},
      {"bash", "-lc", "cd \"$HOME\" && apply_patch " + heredoc},
      {"bash", "-lc", "cd && apply_patch " + heredoc},
      {"bash", "-lc", "apply_patch foo " + heredoc},
      {"bash", "-lc", "apply_patch <<'EOF' > out.txt\n" + kPatch + "\nEOF\n"},
      {"bash", "-lc", "apply_patch <<'EOF'\n" + kPatch + "\nEOFX\n"},
      {"bash", "-lc", "apply_patch < patch.txt"},
      {"bash", "-lc", "other_tool " + heredoc},
  };
  for (const auto& argv : cases) {
    CAPTURE(argv);
    Intercept r = intercept_shell(argv, kCwd);
    CHECK(r.kind == InterceptKind::none);
  }
}
