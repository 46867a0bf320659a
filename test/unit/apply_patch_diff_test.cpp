// Unit tests for the unified diff renderer shared by apply_patch verification (context 1) and the
// turn diff tracker (context 3). Expected texts are what the Rust `similar` crate prints.
#include <doctest/doctest.h>

#include <string>

#include "sandbox/apply_patch.hpp"

using llmx::patch::unified_diff;

TEST_CASE("patch diff: identical texts give no hunks") {
  CHECK(unified_diff("", "", 3) == "");
  CHECK(unified_diff("a\nb\n", "a\nb\n", 1) == "");
}

TEST_CASE("patch diff: a one-line change with context 1") {
  CHECK(unified_diff("a\nb\nc\n", "a\nB\nc\n", 1) == "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  CHECK(unified_diff("only\n", "changed\n", 1) == "@@ -1 +1 @@\n-only\n+changed\n");
}

TEST_CASE("patch diff: empty ranges name the line before them") {
  CHECK(unified_diff("", "x\n", 3) == "@@ -0,0 +1 @@\n+x\n");
  CHECK(unified_diff("x\ny\n", "", 3) == "@@ -1,2 +0,0 @@\n-x\n-y\n");
  CHECK(unified_diff("a\nb\n", "a\nb\nc\n", 1) == "@@ -2 +2,2 @@\n b\n+c\n");
}

TEST_CASE("patch diff: missing final newline is marked") {
  CHECK(unified_diff("a\nb", "a\nc\n", 1) ==
        "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n");
  CHECK(unified_diff("x\n", "x", 3) == "@@ -1 +1 @@\n-x\n+x\n\\ No newline at end of file\n");
}

TEST_CASE("patch diff: distant changes form separate hunks, near ones merge") {
  const char* old_text = "line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\n";
  const char* new_text = "line1\nLINE2\nline3\nline4\nline5\nline6\nLINE7\nline8\n";
  CHECK(unified_diff(old_text, new_text, 1) ==
        "@@ -1,3 +1,3 @@\n line1\n-line2\n+LINE2\n line3\n"
        "@@ -6,3 +6,3 @@\n line6\n-line7\n+LINE7\n line8\n");
  // Four unchanged lines between the changes are not more than 2 * context(2): one hunk.
  CHECK(unified_diff(old_text, new_text, 2) ==
        "@@ -1,8 +1,8 @@\n line1\n-line2\n+LINE2\n line3\n line4\n line5\n line6\n-line7\n"
        "+LINE7\n line8\n");
}

TEST_CASE("patch diff: inserted blocks slide like similar's compaction") {
  CHECK(unified_diff("a\n}\n\nb\n", "a\n}\n\nx\n}\n\nb\n", 3) ==
        "@@ -1,4 +1,7 @@\n a\n }\n \n+x\n+}\n+\n b\n");
  CHECK(unified_diff("fn a() {\n    1\n}\n\nfn c() {\n    3\n}\n",
                     "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n", 1) ==
        "@@ -4,2 +4,6 @@\n \n+fn b() {\n+    2\n+}\n+\n fn c() {\n");
  // Plain Myers would put the second insertion before "b"; compaction moves it after.
  CHECK(unified_diff("b\n\na\nb\na\n", "b\n\nb\n\na\nb\nb\na\n", 1) ==
        "@@ -2,4 +2,7 @@\n \n+b\n+\n a\n b\n+b\n a\n");
}

TEST_CASE("patch diff: CRLF and lone CR end lines") {
  CHECK(unified_diff("a\r\nb\r\n", "a\r\nc\r\n", 3) == "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
  CHECK(unified_diff("a\rb\r", "a\rc\r", 3) == "@@ -1,2 +1,2 @@\n a\r-b\r+c\r");
}
