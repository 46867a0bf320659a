// Unit tests for the apply_patch parser (engine.md §8.1–8.2): grammar, lenient heredoc
// unwrapping, every parse error text and its line number.
#include <doctest/doctest.h>

#include <string>

#include "sandbox/apply_patch.hpp"

using namespace llmx::patch;

namespace {

Patch parsed(std::string_view text) {
  auto r = parse(text);
  if (auto* e = std::get_if<ParseError>(&r)) FAIL("unexpected parse error: " << e->display());
  return std::get<Patch>(r);
}

ParseError failed(std::string_view text) {
  auto r = parse(text);
  REQUIRE(std::holds_alternative<ParseError>(r));
  return std::get<ParseError>(r);
}

std::string wrap(const std::string& body) { return "*** Begin Patch\n" + body + "*** End Patch"; }

const std::string kUnexpectedTail =
    "'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)";

}  // namespace

TEST_CASE("patch parse: the spec example yields add, update with move, delete") {
  Patch p = parsed(
      "*** Begin Patch\n"
      "*** Add File: hello.txt\n"
      "+Hello world\n"
      "*** Update File: src/app.py\n"
      "*** Move to: src/main.py\n"
      "@@ def greet():\n"
      "-print(\"Hi\")\n"
      "+print(\"Hello, world!\")\n"
      "*** Delete File: obsolete.txt\n"
      "*** End Patch\n");
  REQUIRE(p.hunks.size() == 3);
  CHECK(p.hunks[0].kind == Hunk::add);
  CHECK(p.hunks[0].path == "hello.txt");
  CHECK(p.hunks[0].contents == "Hello world\n");
  CHECK(p.hunks[1].kind == Hunk::update);
  CHECK(p.hunks[1].path == "src/app.py");
  CHECK(p.hunks[1].move_path == std::optional<std::string>("src/main.py"));
  REQUIRE(p.hunks[1].chunks.size() == 1);
  const UpdateChunk& c = p.hunks[1].chunks[0];
  CHECK(c.change_context == std::optional<std::string>("def greet():"));
  CHECK(c.old_lines == std::vector<std::string>{"print(\"Hi\")"});
  CHECK(c.new_lines == std::vector<std::string>{"print(\"Hello, world!\")"});
  CHECK_FALSE(c.is_end_of_file);
  CHECK(p.hunks[2].kind == Hunk::remove);
  CHECK(p.hunks[2].path == "obsolete.txt");
  // The normalised text has no trailing newline.
  CHECK(p.text.substr(0, 16) == "*** Begin Patch\n");
  CHECK(p.text.substr(p.text.size() - 13) == "*** End Patch");
}

TEST_CASE("patch parse: Create File is an alias of Add File, zero + lines is an empty file") {
  Patch p = parsed(wrap("*** Create File: a.txt\n+x\n+\n*** Add File: empty.txt\n"));
  REQUIRE(p.hunks.size() == 2);
  CHECK(p.hunks[0].kind == Hunk::add);
  CHECK(p.hunks[0].path == "a.txt");
  CHECK(p.hunks[0].contents == "x\n\n");
  CHECK(p.hunks[1].kind == Hunk::add);
  CHECK(p.hunks[1].path == "empty.txt");
  CHECK(p.hunks[1].contents == "");
}

TEST_CASE("patch parse: add content stops at the first line not starting with +") {
  Patch p = parsed(wrap("*** Add File: a\n+one\n+two\n*** Delete File: b\n"));
  REQUIRE(p.hunks.size() == 2);
  CHECK(p.hunks[0].contents == "one\ntwo\n");
  CHECK(p.hunks[1].kind == Hunk::remove);
}

TEST_CASE("patch parse: an empty patch has zero hunks") {
  Patch p = parsed("*** Begin Patch\n*** End Patch");
  CHECK(p.hunks.empty());
  CHECK(p.text == "*** Begin Patch\n*** End Patch");
}

TEST_CASE("patch parse: boundary errors and both renderings") {
  ParseError first = failed("bad");
  CHECK(first.message == "The first line of the patch must be '*** Begin Patch'");
  CHECK_FALSE(first.line.has_value());
  CHECK(first.display() == "invalid patch: The first line of the patch must be '*** Begin Patch'");
  CHECK(first.cli_display() == "Invalid patch: The first line of the patch must be '*** Begin Patch'");

  ParseError last = failed("*** Begin Patch\n*** Add File: a\n+x");
  CHECK(last.display() == "invalid patch: The last line of the patch must be '*** End Patch'");
  // Both wrong: the first-line error wins.
  CHECK(failed("x\ny").message == "The first line of the patch must be '*** Begin Patch'");
  // No lines at all reports the last line (reference behaviour).
  CHECK(failed("  \n ").message == "The last line of the patch must be '*** End Patch'");
  // A lone Begin line has no End line.
  CHECK(failed("*** Begin Patch").message == "The last line of the patch must be '*** End Patch'");
}

TEST_CASE("patch parse: markers must match exactly, only the whole text is trimmed") {
  CHECK(parsed("\n  *** Begin Patch\n*** Delete File: a\n*** End Patch  \n\n").hunks.size() == 1);
  CHECK(failed("*** Begin Patch \n*** End Patch").message ==
        "The first line of the patch must be '*** Begin Patch'");
  CHECK(failed("*** Begin Patch\n*** Delete File: a\n *** End Patch").message ==
        "The last line of the patch must be '*** End Patch'");
  // A trailing \r stays part of the line, so CRLF markers do not match.
  CHECK(failed("*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n").message ==
        "The first line of the patch must be '*** Begin Patch'");
}

TEST_CASE("patch parse: heredoc wrapper is removed in lenient mode") {
  for (std::string open : {"<<EOF", "<<'EOF'", "<<\"EOF\""}) {
    CAPTURE(open);
    Patch p = parsed(open + "\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n");
    REQUIRE(p.hunks.size() == 1);
    CHECK(p.hunks[0].path == "a");
    CHECK(p.text == "*** Begin Patch\n*** Delete File: a\n*** End Patch");
  }
  // The last line only has to end with EOF.
  CHECK(parsed("<<EOF\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nxEOF").hunks.size() == 1);
  // Inside the wrapper the markers are checked again, and that error is reported.
  CHECK(failed("<<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\nEOF").message ==
        "The last line of the patch must be '*** End Patch'");
  // Other openers or fewer than 4 lines keep the original error.
  CHECK(failed("<<'END'\n*** Begin Patch\n*** End Patch\nEND").message ==
        "The first line of the patch must be '*** Begin Patch'");
  CHECK(failed("<<EOF\n*** Begin Patch\nEOF").message ==
        "The first line of the patch must be '*** Begin Patch'");
  // Hunk line numbers count from the inner Begin line.
  ParseError e = failed("<<EOF\n*** Begin Patch\n*** Nope: a\n*** End Patch\nEOF");
  CHECK(e.line == std::optional<size_t>(2));
}

TEST_CASE("patch parse: hunk headers are trimmed, the Move to line is not") {
  Patch p = parsed(wrap("  *** Update File: a.txt  \n*** Move to: b.txt \n@@\n-x\n+y\n"));
  REQUIRE(p.hunks.size() == 1);
  CHECK(p.hunks[0].path == "a.txt");
  CHECK(p.hunks[0].move_path == std::optional<std::string>("b.txt "));
  // Unicode whitespace counts too (Rust str::trim).
  CHECK(parsed(wrap("\u00A0*** Delete File: c\u3000\n")).hunks[0].path == "c");
}

TEST_CASE("patch parse: an unknown hunk header names the line and the valid headers") {
  ParseError e = failed(wrap("*** Frobnicate File: a\n"));
  CHECK(e.line == std::optional<size_t>(2));
  CHECK(e.display() ==
        "invalid hunk at line 2, '*** Frobnicate File: a' is not a valid hunk header. Valid hunk "
        "headers: '*** Add File: {path}', '*** Create File: {path}', '*** Delete File: {path}', "
        "'*** Update File: {path}'");
  CHECK(e.cli_display().rfind("Invalid patch hunk on line 2: '*** Frobnicate File: a' is not", 0) ==
        0);
  // Line numbers advance over the lines of earlier hunks.
  ParseError later = failed(wrap("*** Add File: a\n+x\n+y\nbogus\n"));
  CHECK(later.line == std::optional<size_t>(5));
  CHECK(later.message.rfind("'bogus' is not a valid hunk header.", 0) == 0);
}

TEST_CASE("patch parse: an update without chunks is an error") {
  CHECK(failed(wrap("*** Update File: test.py\n")).display() ==
        "invalid hunk at line 2, Update file hunk for path 'test.py' is empty");
  CHECK(failed(wrap("*** Delete File: x\n*** Update File: m.py\n*** Move to: n.py\n\n")).display() ==
        "invalid hunk at line 3, Update file hunk for path 'm.py' is empty");
}

TEST_CASE("patch parse: chunk markers, context lines and the End of File marker") {
  Patch p = parsed(wrap(
      "*** Update File: f\n"
      "@@ class A\n"
      " keep\n"
      "\n"
      "-old\n"
      "+new\n"
      "@@\n"
      "-tail\n"
      "+TAIL\n"
      "*** End of File\n"
      "@@ \n"
      "+more\n"));
  REQUIRE(p.hunks.size() == 1);
  const auto& ch = p.hunks[0].chunks;
  REQUIRE(ch.size() == 3);
  CHECK(ch[0].change_context == std::optional<std::string>("class A"));
  // An empty line is an empty context line.
  CHECK(ch[0].old_lines == std::vector<std::string>{"keep", "", "old"});
  CHECK(ch[0].new_lines == std::vector<std::string>{"keep", "", "new"});
  CHECK_FALSE(ch[0].is_end_of_file);
  CHECK_FALSE(ch[1].change_context.has_value());
  CHECK(ch[1].old_lines == std::vector<std::string>{"tail"});
  CHECK(ch[1].is_end_of_file);
  // "@@ " carries an empty context string.
  CHECK(ch[2].change_context == std::optional<std::string>(""));
  CHECK(ch[2].old_lines.empty());
  CHECK(ch[2].new_lines == std::vector<std::string>{"more"});
}

TEST_CASE("patch parse: the first chunk may omit @@, later ones may not") {
  Patch p = parsed(wrap("*** Update File: f\n import foo\n+bar\n"));
  REQUIRE(p.hunks[0].chunks.size() == 1);
  CHECK_FALSE(p.hunks[0].chunks[0].change_context.has_value());
  CHECK(p.hunks[0].chunks[0].old_lines == std::vector<std::string>{"import foo"});
  CHECK(p.hunks[0].chunks[0].new_lines == std::vector<std::string>{"import foo", "bar"});

  ParseError e = failed(wrap("*** Update File: f\n@@\n-x\n+y\nfoo\n"));
  CHECK(e.display() ==
        "invalid hunk at line 6, Expected update hunk to start with a @@ context marker, got: 'foo'");
}

TEST_CASE("patch parse: whitespace-only lines between chunks are skipped") {
  // A tab-only line ends the first chunk and is then skipped; so are blank lines after an
  // End of File marker.
  Patch p = parsed(wrap(
      "*** Update File: f\n@@\n-a\n+b\n\t\n@@\n-c\n+d\n*** End of File\n\n   \n@@\n-e\n+f\n"));
  REQUIRE(p.hunks[0].chunks.size() == 3);
  CHECK(p.hunks[0].chunks[0].old_lines == std::vector<std::string>{"a"});
  CHECK(p.hunks[0].chunks[1].old_lines == std::vector<std::string>{"c"});
  CHECK(p.hunks[0].chunks[2].old_lines == std::vector<std::string>{"e"});
  // Line numbering counts the skipped lines: Move (3), blank (4), chunk 5-7, junk at 8.
  ParseError e = failed(wrap("*** Update File: c\n*** Move to: d\n\n@@ x\n-y\n+z\njunk\n"));
  CHECK(e.line == std::optional<size_t>(8));
}

TEST_CASE("patch parse: a chunk without body lines is an error") {
  CHECK(failed(wrap("*** Update File: f\n@@\n")).display() ==
        "invalid hunk at line 4, Update hunk does not contain any lines");
  CHECK(failed(wrap("*** Update File: f\n@@ ctx\n*** End of File\n")).display() ==
        "invalid hunk at line 4, Update hunk does not contain any lines");
}

TEST_CASE("patch parse: an unexpected first body line is an error, later it ends the chunk") {
  CHECK(failed(wrap("*** Update File: f\n@@\nbad line\n")).display() ==
        "invalid hunk at line 4, Unexpected line found in update hunk: 'bad line" + kUnexpectedTail);
  // Without @@ the reference reports the line after the chunk start.
  CHECK(failed(wrap("*** Update File: f\nbad\n")).display() ==
        "invalid hunk at line 4, Unexpected line found in update hunk: 'bad" + kUnexpectedTail);
  // After a body line, a *** line ends the chunk and the hunk.
  Patch p = parsed(wrap("*** Update File: f\n@@\n-a\n*** Delete File: g\n"));
  CHECK(p.hunks.size() == 2);
}
