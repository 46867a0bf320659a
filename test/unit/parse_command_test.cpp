// Unit tests for parsed_cmd (engine.md §6.2): read / list_files / search / unknown summaries and
// the shell quoting used to show commands.
#include "sandbox/parse_command.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace llmx::sandbox;
using llmx::ParsedListFiles;
using llmx::ParsedRead;
using llmx::ParsedSearch;
using llmx::ParsedUnknown;

namespace {

std::string opt(const std::optional<std::string>& s) { return s ? *s : "<none>"; }

// One line per entry: `kind | cmd | fields...`.
std::vector<std::string> show(const std::vector<llmx::ParsedCommand>& cmds) {
  std::vector<std::string> out;
  for (const auto& c : cmds) {
    if (auto r = c.get_if<ParsedRead>())
      out.push_back("read | " + r->cmd + " | " + r->name + " | " + r->path);
    else if (auto l = c.get_if<ParsedListFiles>())
      out.push_back("list_files | " + l->cmd + " | " + opt(l->path));
    else if (auto s = c.get_if<ParsedSearch>())
      out.push_back("search | " + s->cmd + " | " + opt(s->query) + " | " + opt(s->path));
    else if (auto u = c.get_if<ParsedUnknown>())
      out.push_back("unknown | " + u->cmd);
  }
  return out;
}

using Lines = std::vector<std::string>;

}  // namespace

TEST_CASE("parse_command: direct argv") {
  struct Case {
    std::vector<std::string> argv;
    Lines expected;
  };
  const std::vector<Case> cases = {
      {{"cat", "src/main.rs"}, {"read | cat src/main.rs | main.rs | src/main.rs"}},
      {{"head", "-n", "50", "README.md"}, {"read | head -n 50 README.md | README.md | README.md"}},
      {{"tail", "-n", "+10", "log/x.txt"}, {"read | tail -n +10 log/x.txt | x.txt | log/x.txt"}},
      {{"nl", "-ba", "a.py"}, {"read | nl -ba a.py | a.py | a.py"}},
      {{"less", "my file.txt"}, {"read | less 'my file.txt' | my file.txt | my file.txt"}},
      {{"sed", "-n", "1,40p", "x/y.c"}, {"read | sed -n 1,40p x/y.c | y.c | x/y.c"}},
      {{"cat", "a", "b"}, {"unknown | cat a b"}},
      {{"cat"}, {"unknown | cat"}},
      {{"ls"}, {"list_files | ls | <none>"}},
      {{"ls", "-la", "src"}, {"list_files | ls -la src | src"}},
      {{"ls", "-I", "target", "crates"}, {"list_files | ls -I target crates | crates"}},
      {{"find", ".", "-name", "*.rs"}, {"list_files | find . -name '*.rs' | ."}},
      {{"find", "-name", "x"}, {"list_files | find -name x | <none>"}},
      {{"tree", "-L", "2", "src"}, {"list_files | tree -L 2 src | src"}},
      {{"rg", "--files", "src"}, {"list_files | rg --files src | src"}},
      {{"rg", "-n", "fn main", "src"}, {"search | rg -n 'fn main' src | fn main | src"}},
      {{"rg", "-g", "*.rs", "TODO"}, {"search | rg -g '*.rs' TODO | TODO | <none>"}},
      {{"grep", "-rn", "TODO", "."}, {"search | grep -rn TODO . | TODO | ."}},
      {{"grep", "-e", "foo", "a.txt"}, {"search | grep -e foo a.txt | foo | a.txt"}},
      {{"grep", "-A", "3", "x"}, {"search | grep -A 3 x | x | <none>"}},
      {{"ag", "needle", "lib"}, {"search | ag needle lib | needle | lib"}},
      {{"git", "grep", "-n", "needle"}, {"search | git grep -n needle | needle | <none>"}},
      {{"/usr/bin/rg", "x"}, {"search | /usr/bin/rg x | x | <none>"}},
      {{"python3", "x.py"}, {"unknown | python3 x.py"}},
      {{"git", "status"}, {"unknown | git status"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.expected.front());
    CHECK(show(parse_command(c.argv)) == c.expected);
  }
  CHECK(parse_command({}).empty());
}

TEST_CASE("parse_command: bash -lc scripts are split into their commands") {
  struct Case {
    std::string script;
    Lines expected;
  };
  const std::vector<Case> cases = {
      {"ls -la && cat README.md",
       {"list_files | ls -la | <none>", "read | cat README.md | README.md | README.md"}},
      {"rg -n 'foo bar' src | head -n 20", {"search | rg -n 'foo bar' src | foo bar | src"}},
      {"cat a.txt | wc -l", {"read | cat a.txt | a.txt | a.txt"}},
      {"grep -c x f | sort | uniq -c | tail -n 3", {"search | grep -c x f | x | f"}},
      {"ls | grep foo", {"list_files | ls | <none>", "search | grep foo | foo | <none>"}},
      {"cd sub && grep -r TODO .", {"unknown | cd sub", "search | grep -r TODO . | TODO | ."}},
      {"ls && ls", {"list_files | ls | <none>"}},
      {"cat x | python3 -c 'print(1)'", {"read | cat x | x | x", "unknown | python3 -c 'print(1)'"}},
      {"echo $HOME", {"unknown | echo $HOME"}},
      {"ls > out.txt", {"unknown | ls > out.txt"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.script);
    CHECK(show(parse_command({"bash", "-lc", c.script})) == c.expected);
  }
  // Display also reads `-c` wrappers (exec_command without login) and sh.
  CHECK(show(parse_command({"bash", "-c", "cat a"})) == Lines{"read | cat a | a | a"});
  CHECK(show(parse_command({"sh", "-c", "ls src"})) == Lines{"list_files | ls src | src"});
  // A wrapper with extra arguments is not a script: shown as it is.
  CHECK(show(parse_command({"bash", "-lc", "ls", "x"})) == Lines{"unknown | bash -lc ls x"});
}

TEST_CASE("parse_command: shell_join quotes only what needs it") {
  CHECK(shell_join({"ls", "-la"}) == "ls -la");
  CHECK(shell_join({"a@b%c+d=e:f,g./h-i_J9"}) == "a@b%c+d=e:f,g./h-i_J9");
  CHECK(shell_join({"echo", "a b"}) == "echo 'a b'");
  CHECK(shell_join({"echo", "it's"}) == "echo 'it'\"'\"'s'");
  CHECK(shell_join({"echo", ""}) == "echo ''");
  CHECK(shell_join({"echo", "$HOME", "*", "x;y"}) == "echo '$HOME' '*' 'x;y'");
  CHECK(shell_join({"echo", "caf\xc3\xa9"}) == "echo 'caf\xc3\xa9'");
  CHECK(shell_join({}) == "");
  CHECK(shell_quote("~/x") == "'~/x'");
}
