// Unit tests for the word-only bash parser (engine.md §7.5, §7.6): what it accepts, the words it
// extracts, and everything it must refuse.
#include "sandbox/bash_parse.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace llmx::sandbox;

namespace {
using Cmds = std::vector<Words>;
}

TEST_CASE("bash_parse: simple lists and pipelines give their words in order") {
  struct Case {
    std::string script;
    Cmds expected;
  };
  const std::vector<Case> cases = {
      {"ls", {{"ls"}}},
      {"  ls   -la\tsrc  ", {{"ls", "-la", "src"}}},
      {"ls && pwd", {{"ls"}, {"pwd"}}},
      {"ls&&pwd", {{"ls"}, {"pwd"}}},
      {"false || true", {{"false"}, {"true"}}},
      {"git status; git diff", {{"git", "status"}, {"git", "diff"}}},
      {"ls;", {{"ls"}}},
      {"rg -n 'foo bar' src | head -n 5", {{"rg", "-n", "foo bar", "src"}, {"head", "-n", "5"}}},
      {"echo \"hello world\"", {{"echo", "hello world"}}},
      {"echo '' \"\"", {{"echo", "", ""}}},
      {"echo '$HOME `x` \\ * ( ) > <'", {{"echo", "$HOME `x` \\ * ( ) > <"}}},
      {"grep \"a\\|b\" f", {{"grep", "a\\|b", "f"}}},
      {"ls\npwd\n", {{"ls"}, {"pwd"}}},
      {"\n\nls\n\n", {{"ls"}}},
      {"ls &&\n  pwd", {{"ls"}, {"pwd"}}},
      {"cat f |\nwc -l", {{"cat", "f"}, {"wc", "-l"}}},
      {"sed -n 1,5p f.txt", {{"sed", "-n", "1,5p", "f.txt"}}},
      {"make X=1 -j4", {{"make", "X=1", "-j4"}}},
      {"git log --format=%h@%an:x,y", {{"git", "log", "--format=%h@%an:x,y"}}},
      {"cat ~/notes.txt a#b", {{"cat", "~/notes.txt", "a#b"}}},
      {"'X=1' ls", {{"X=1", "ls"}}},
      {"'if' x", {{"if", "x"}}},
      {"echo 'multi\nline'", {{"echo", "multi\nline"}}},
      {"echo h\xc3\xa9llo", {{"echo", "h\xc3\xa9llo"}}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.script);
    auto got = parse_word_only_commands(c.script);
    REQUIRE(got.has_value());
    CHECK(*got == c.expected);
  }
}

TEST_CASE("bash_parse: pipelines are grouped, lists split them") {
  auto p = parse_word_only_pipelines("cat a | grep x | wc -l && ls; pwd | head");
  REQUIRE(p.has_value());
  REQUIRE(p->size() == 3);
  CHECK((*p)[0] == Pipeline{{"cat", "a"}, {"grep", "x"}, {"wc", "-l"}});
  CHECK((*p)[1] == Pipeline{{"ls"}});
  CHECK((*p)[2] == Pipeline{{"pwd"}, {"head"}});
}

TEST_CASE("bash_parse: anything outside the word-only subset is refused") {
  const std::vector<std::string> rejected = {
      "",
      "   \n ",
      "ls > out.txt",
      "ls >> out.txt",
      "ls < in.txt",
      "ls 2>&1",
      "ls &> f",
      "cat <<EOF\nx\nEOF",
      "(ls)",
      "{ ls; }",
      "echo $HOME",
      "echo ${HOME}",
      "echo \"$HOME\"",
      "echo $(pwd)",
      "echo \"`pwd`\"",
      "echo `pwd`",
      "ls *.txt",
      "ls file?.txt",
      "ls [ab]",
      "ls {a,b}",
      "ls &",
      "ls & pwd",
      "ls |& cat",
      "X=1 ls",
      "PATH=/tmp ls",
      "if true; then ls; fi",
      "for i in a b; do echo x; done",
      "while true; do ls; done",
      "until false; do ls; done",
      "case x in x) ls;; esac",
      "function f { ls; }",
      "time ls",
      "! ls",
      "echo hi!",
      "ls # comment",
      "# just a comment",
      "ls &&",
      "ls ||",
      "ls |",
      "ls && ;",
      "; ls",
      "ls ;; pwd",
      "ls | | wc",
      "echo 'unterminated",
      "echo \"unterminated",
      "echo a\\ b",
      "ls \\\n -la",
      "echo \"a\\\"b\"",
      "echo \"a\\$b\"",
      "echo \"a\\\\b\"",
      "echo a\"b\"",
      "echo 'a''b'",
      "echo \"a\"b",
  };
  for (const auto& s : rejected) {
    CAPTURE(s);
    CHECK_FALSE(parse_word_only_commands(s).has_value());
    CHECK_FALSE(parse_word_only_pipelines(s).has_value());
  }
}

TEST_CASE("bash_parse: extract_shell_script takes exactly [bash|zsh, -lc, script]") {
  CHECK(extract_shell_script({"bash", "-lc", "ls"}) == std::optional<std::string>("ls"));
  CHECK(extract_shell_script({"zsh", "-lc", "pwd"}) == std::optional<std::string>("pwd"));
  CHECK(extract_shell_script({"/bin/bash", "-lc", "ls"}) == std::optional<std::string>("ls"));
  CHECK(extract_shell_script({"/usr/local/bin/zsh", "-lc", "x"}) == std::optional<std::string>("x"));
  CHECK_FALSE(extract_shell_script({"bash", "-c", "ls"}).has_value());
  CHECK_FALSE(extract_shell_script({"sh", "-lc", "ls"}).has_value());
  CHECK_FALSE(extract_shell_script({"bash", "-lc"}).has_value());
  CHECK_FALSE(extract_shell_script({"bash", "-lc", "git", "status"}).has_value());
  CHECK_FALSE(extract_shell_script({"mybash", "-lc", "ls"}).has_value());
  CHECK_FALSE(extract_shell_script({}).has_value());
}

TEST_CASE("bash_parse: path_basename") {
  CHECK(path_basename("/usr/bin/git") == "git");
  CHECK(path_basename("git") == "git");
  CHECK(path_basename("./x/") == "");
}
