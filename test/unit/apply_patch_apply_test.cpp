// Unit tests for locating and applying chunks (engine.md §8.3), seek_sequence's four passes,
// applying to disk with its summary and error texts (§8.4), verification (§8.5) and the
// "all paths writable" check (§7.3). Files live in mkdtemp directories under /tmp.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sandbox/apply_patch.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using namespace llmx::patch;

namespace {

struct TempDir : llmx::test::TempDir {
  TempDir() : llmx::test::TempDir("llmx_apply_patch") {}
};

Patch parsed_body(const std::string& body) {
  auto r = parse("*** Begin Patch\n" + body + "*** End Patch");
  if (auto* e = std::get_if<ParseError>(&r)) FAIL("unexpected parse error: " << e->display());
  return std::get<Patch>(r);
}

std::vector<UpdateChunk> chunks_of(const std::string& body) {
  Patch p = parsed_body("*** Update File: f\n" + body);
  REQUIRE(p.hunks.size() == 1);
  return p.hunks[0].chunks;
}

std::string applied(std::string_view original, const std::string& body) {
  auto r = apply_chunks(original, chunks_of(body), "f");
  if (!r) FAIL("apply_chunks failed: " << r.error);
  return *r;
}

std::string apply_error(std::string_view original, const std::string& body) {
  auto r = apply_chunks(original, chunks_of(body), "f");
  REQUIRE_FALSE(r);
  return r.error;
}

using Lines = std::vector<std::string>;
const std::string kNoEnt = "No such file or directory (os error 2)";

}  // namespace

// --- seek_sequence ------------------------------------------------------------------------------

TEST_CASE("patch seek: empty and oversized patterns") {
  CHECK(seek_sequence({"a", "b"}, {}, 1, false) == std::optional<size_t>(1));
  CHECK(seek_sequence({"a"}, {"a", "b"}, 0, false) == std::nullopt);
  CHECK(seek_sequence({"a", "b"}, {"b"}, 5, false) == std::nullopt);
}

TEST_CASE("patch seek: pass 1, exact match from the start index") {
  Lines lines = {"x", "a", "b", "a", "b"};
  CHECK(seek_sequence(lines, {"a", "b"}, 0, false) == std::optional<size_t>(1));
  CHECK(seek_sequence(lines, {"a", "b"}, 2, false) == std::optional<size_t>(3));
  // An exact match anywhere beats a fuzzy match earlier.
  CHECK(seek_sequence({"a ", "a"}, {"a"}, 0, false) == std::optional<size_t>(1));
}

TEST_CASE("patch seek: pass 2 ignores trailing whitespace, pass 3 surrounding whitespace") {
  CHECK(seek_sequence({"foo   ", "bar\t"}, {"foo", "bar  "}, 0, false) == std::optional<size_t>(0));
  CHECK(seek_sequence({"  foo"}, {"foo"}, 0, false) == std::optional<size_t>(0));
  // Trailing-whitespace equality (pass 2) wins over an earlier fully trimmed match (pass 3).
  CHECK(seek_sequence({"  x", "x  "}, {"x"}, 0, false) == std::optional<size_t>(1));
  // Trimming is Unicode-aware, like Rust's str::trim.
  CHECK(seek_sequence({"\u00A0foo\u3000"}, {"foo"}, 0, false) == std::optional<size_t>(0));
  CHECK(seek_sequence({"\u2028foo\u2003"}, {"foo"}, 0, false) == std::optional<size_t>(0));
}

TEST_CASE("patch seek: pass 4 normalises typographic dashes, quotes and spaces") {
  for (const char* dash : {"\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"}) {
    CAPTURE(dash);
    CHECK(seek_sequence({std::string("a ") + dash + " b"}, {"a - b"}, 0, false) ==
          std::optional<size_t>(0));
  }
  for (const char* q : {"\u2018", "\u2019", "\u201A", "\u201B"}) {
    CAPTURE(q);
    CHECK(seek_sequence({std::string("it") + q + "s"}, {"it's"}, 0, false) == std::optional<size_t>(0));
  }
  for (const char* q : {"\u201C", "\u201D", "\u201E", "\u201F"}) {
    CAPTURE(q);
    CHECK(seek_sequence({std::string(q) + "x" + q}, {"\"x\""}, 0, false) == std::optional<size_t>(0));
  }
  for (const char* sp : {"\u00A0", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007",
                         "\u2008", "\u2009", "\u200A", "\u202F", "\u205F", "\u3000"}) {
    CAPTURE(sp);
    CHECK(seek_sequence({std::string("x") + sp + "y"}, {"x y"}, 0, false) == std::optional<size_t>(0));
  }
  // Other characters are not folded.
  CHECK(seek_sequence({"a\u2016b"}, {"a-b"}, 0, false) == std::nullopt);
  // The pattern side is normalised too, and exact matches still win.
  CHECK(seek_sequence({"a-b", "a\u2014b"}, {"a\u2014b"}, 0, false) == std::optional<size_t>(1));
  CHECK(seek_sequence({"x", "a-b"}, {"a\u2014b"}, 0, false) == std::optional<size_t>(1));
}

TEST_CASE("patch seek: EOF mode only tries the last position") {
  Lines lines = {"a", "b", "a"};
  CHECK(seek_sequence(lines, {"a"}, 0, false) == std::optional<size_t>(0));
  CHECK(seek_sequence(lines, {"a"}, 0, true) == std::optional<size_t>(2));
  CHECK(seek_sequence({"a", "b"}, {"a"}, 0, true) == std::nullopt);
}

// --- apply_chunks -------------------------------------------------------------------------------

TEST_CASE("patch chunks: several chunks with context lines") {
  std::string original = "def a():\n    pass\ndef b():\n    pass\nx\ny\nz\n";
  CHECK(applied(original, "@@ def b():\n-    pass\n+    return 1\n@@\n x\n-y\n+Y\n") ==
        "def a():\n    pass\ndef b():\n    return 1\nx\nY\nz\n");
  // Each chunk searches after the previous one.
  CHECK(applied("x\ny\nx\ny\n", "@@\n-x\n+1\n@@\n-x\n+2\n") == "1\ny\n2\ny\n");
}

TEST_CASE("patch chunks: error texts") {
  CHECK(apply_error("a\n", "@@ def nope\n-a\n+b\n") == "Failed to find context 'def nope' in f");
  CHECK(apply_error("a\n", "@@\n-x\n-y\n+z\n") == "Failed to find expected lines in f:\nx\ny");
  // Context is searched after the previous chunk only.
  CHECK(apply_error("c\nx\n", "@@\n-x\n+y\n@@ c\n+z\n") == "Failed to find context 'c' in f");
}

TEST_CASE("patch chunks: a pure insertion is appended at the end, ignoring its context") {
  CHECK(applied("a\nb\nc\n", "@@ a\n+new\n") == "a\nb\nc\nnew\n");
  // ...before a trailing blank line, which the final join then drops (reference behaviour).
  CHECK(applied("a\n\n", "@@\n+new\n") == "a\nnew\n");
}

TEST_CASE("patch chunks: a trailing empty old line is retried without it") {
  // The model wrote the file's final newline as an empty context line.
  CHECK(applied("x\ny\n", "@@\n-y\n+z\n\n") == "x\nz\n");
  CHECK(applied("x\ny\n", "@@\n-y\n-\n+z\n") == "x\nz\n");
}

TEST_CASE("patch chunks: the result ends with exactly one newline") {
  CHECK(applied("a\nb", "@@\n-b\n+c\n") == "a\nc\n");
  CHECK(applied("a\nb\n", "@@\n-b\n+c\n") == "a\nc\n");
}

TEST_CASE("patch chunks: End of File anchors the chunk at the end") {
  CHECK(applied("a\nb\na\n", "@@\n-a\n+A\n*** End of File\n") == "a\nb\nA\n");
  CHECK(applied("a\nb\na\n", "@@\n-a\n+A\n") == "A\nb\na\n");
  CHECK(apply_error("a\nb\n", "@@\n-a\n+A\n*** End of File\n") ==
        "Failed to find expected lines in f:\na");
}

// --- applying to disk ---------------------------------------------------------------------------

TEST_CASE("patch apply: add, update, move and delete with the A/M/D summary") {
  TempDir d;
  d.write("old.txt", "keep\nold\n");
  d.write("upd.txt", "one\ntwo\nthree\n");
  d.write("gone.txt", "bye\n");
  d.write("existing.txt", "overwritten\n");
  // Listed in the summary as added, then modified, then deleted, whatever the patch order.
  Patch p = parsed_body(
      "*** Delete File: gone.txt\n"
      "*** Update File: old.txt\n*** Move to: moved/new.txt\n@@\n-old\n+new\n"
      "*** Add File: sub/dir/a.txt\n+hello\n"
      "*** Update File: upd.txt\n@@\n one\n-two\n+TWO\n"
      "*** Add File: existing.txt\n+fresh\n");
  ApplyResult r = patch::apply(p, d.path());
  CHECK(r.exit_code == 0);
  CHECK(r.stderr_text == "");
  CHECK(r.stdout_text ==
        "Success. Updated the following files:\nA sub/dir/a.txt\nA existing.txt\n"
        "M moved/new.txt\nM upd.txt\nD gone.txt\n");
  CHECK(d.read("sub/dir/a.txt") == std::optional<std::string>("hello\n"));
  CHECK(d.read("existing.txt") == std::optional<std::string>("fresh\n"));
  CHECK(d.read("moved/new.txt") == std::optional<std::string>("keep\nnew\n"));
  CHECK_FALSE(d.exists("old.txt"));
  CHECK(d.read("upd.txt") == std::optional<std::string>("one\nTWO\nthree\n"));
  CHECK_FALSE(d.exists("gone.txt"));
}

TEST_CASE("patch apply: zero hunks modify nothing") {
  TempDir d;
  ApplyResult r = patch::apply(Patch{}, d.path());
  CHECK(r.exit_code == 1);
  CHECK(r.stdout_text == "");
  CHECK(r.stderr_text == "No files were modified.\n");
}

TEST_CASE("patch apply: failure texts name the path as written") {
  TempDir d;
  d.write("file", "x\n");
  std::filesystem::create_directories(d.at("dir"));
  auto fails = [&](const std::string& body) {
    ApplyResult r = patch::apply(parsed_body(body), d.path());
    CHECK(r.exit_code == 1);
    CHECK(r.stdout_text == "");
    return r.stderr_text;
  };
  CHECK(fails("*** Delete File: missing.txt\n") == "Failed to delete file missing.txt\n");
  CHECK(fails("*** Update File: missing.txt\n@@\n-a\n+b\n") ==
        "Failed to read file to update missing.txt: " + kNoEnt + "\n");
  CHECK(fails("*** Update File: file\n@@ nope\n-x\n+y\n") == "Failed to find context 'nope' in file\n");
  CHECK(fails("*** Update File: file\n@@\n-zzz\n+y\n") ==
        "Failed to find expected lines in file:\nzzz\n");
  CHECK(fails("*** Add File: file/x.txt\n+x\n") ==
        "Failed to create parent directories for file/x.txt\n");
  CHECK(fails("*** Add File: dir\n+x\n") == "Failed to write file dir\n");
  CHECK(fails("*** Update File: file\n*** Move to: file/y\n@@\n-x\n+y\n") ==
        "Failed to create parent directories for file/y\n");
  CHECK(fails("*** Update File: file\n*** Move to: dir\n@@\n-x\n+y\n") == "Failed to write file dir\n");
  CHECK(d.read("file") == std::optional<std::string>("x\n"));  // nothing half-moved
}

TEST_CASE("patch apply: a move whose source cannot be removed reports it") {
  TempDir d;
  d.write("src.txt", "x\n");
  int fd = ::open(d.at("src.txt").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  int flags = 0;
  bool immutable = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                   (flags |= FS_IMMUTABLE_FL, ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0);
  if (!immutable) {
    ::close(fd);
    WARN_MESSAGE(false, "cannot make a file immutable here; removal failure not exercised");
    return;
  }
  ApplyResult r = patch::apply(parsed_body("*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-x\n+y\n"), d.path());
  flags &= ~FS_IMMUTABLE_FL;
  ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
  ::close(fd);
  CHECK(r.exit_code == 1);
  CHECK(r.stderr_text == "Failed to remove original src.txt\n");
  CHECK(d.read("dst.txt") == std::optional<std::string>("y\n"));  // written before the removal
}

TEST_CASE("patch apply: not atomic, earlier hunks stay applied") {
  TempDir d;
  ApplyResult r =
      patch::apply(parsed_body("*** Add File: first.txt\n+1\n*** Delete File: missing.txt\n*** Add File: third.txt\n+3\n"),
            d.path());
  CHECK(r.exit_code == 1);
  CHECK(r.stderr_text == "Failed to delete file missing.txt\n");
  CHECK(d.read("first.txt") == std::optional<std::string>("1\n"));
  CHECK_FALSE(d.exists("third.txt"));
}

TEST_CASE("patch apply: absolute paths are used as they are") {
  TempDir d, other;
  ApplyResult r = patch::apply(parsed_body("*** Add File: " + other.at("abs.txt") + "\n+x\n"), d.path());
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "Success. Updated the following files:\nA " + other.at("abs.txt") + "\n");
  CHECK(other.read("abs.txt") == std::optional<std::string>("x\n"));
}

TEST_CASE("patch cli: parse errors use the CLI rendering") {
  TempDir d;
  ApplyResult bad = run_cli("nonsense", d.path());
  CHECK(bad.exit_code == 1);
  CHECK(bad.stderr_text == "Invalid patch: The first line of the patch must be '*** Begin Patch'\n");
  ApplyResult hunk = run_cli("*** Begin Patch\n*** Update File: x\n*** End Patch", d.path());
  CHECK(hunk.stderr_text == "Invalid patch hunk on line 2: Update file hunk for path 'x' is empty\n");
  CHECK(run_cli("*** Begin Patch\n*** End Patch", d.path()).stderr_text == "No files were modified.\n");
  ApplyResult ok = run_cli("<<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+hi\n*** End Patch\nEOF\n", d.path());
  CHECK(ok.exit_code == 0);
  CHECK(ok.stdout_text == "Success. Updated the following files:\nA h.txt\n");
}

// --- verification -------------------------------------------------------------------------------

TEST_CASE("patch verify: changes keyed by absolute path, nothing written") {
  TempDir d;
  d.write("del.txt", "old content\n");
  d.write("src/app.py", "a\nb\nc\nd\ne\n");
  Patch p = parsed_body(
      "*** Add File: new.txt\n+hello\n"
      "*** Delete File: del.txt\n"
      "*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n-d\n+D\n");
  auto v = verify(p, d.path());
  REQUIRE_MESSAGE(v, v.error);
  CHECK(v->cwd == d.path());
  CHECK(v->patch.text == p.text);
  REQUIRE(v->changes.size() == 3);
  CHECK(v->changes.at(d.at("new.txt")).get_if<FileAdd>()->content == "hello\n");
  CHECK(v->changes.at(d.at("del.txt")).get_if<FileDelete>()->content == "old content\n");
  const FileUpdate* u = v->changes.at(d.at("src/app.py")).get_if<FileUpdate>();
  REQUIRE(u);
  CHECK(u->unified_diff == "@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n");
  CHECK(u->move_path == std::optional<std::string>(d.at("src/main.py")));
  CHECK_FALSE(d.exists("new.txt"));
  CHECK(d.exists("del.txt"));
  CHECK(d.read("src/app.py") == std::optional<std::string>("a\nb\nc\nd\ne\n"));
}

TEST_CASE("patch verify: an update without move has a null move path, later hunks win") {
  TempDir d;
  d.write("f.txt", "x\n");
  auto v = verify(parsed_body("*** Update File: f.txt\n@@\n-x\n+y\n*** Add File: f.txt\n+z\n"), d.path());
  REQUIRE(v);
  CHECK(v->changes.size() == 1);
  CHECK(v->changes.at(d.at("f.txt")).get_if<FileAdd>()->content == "z\n");
  auto v2 = verify(parsed_body("*** Update File: f.txt\n@@\n-x\n+y\n"), d.path());
  REQUIRE(v2);
  CHECK_FALSE(v2->changes.at(d.at("f.txt")).get_if<FileUpdate>()->move_path.has_value());
}

TEST_CASE("patch verify: error texts carry the verification prefix and absolute paths") {
  TempDir d;
  d.write("f.txt", "a\n");
  d.write("bin.dat", std::string("\xff\xfe\x00", 3));
  const std::string pre = "apply_patch verification failed: ";
  CHECK(verify(parsed_body("*** Delete File: gone.txt\n"), d.path()).error ==
        pre + "Failed to read " + d.at("gone.txt") + ": " + kNoEnt);
  CHECK(verify(parsed_body("*** Update File: gone.txt\n@@\n-a\n+b\n"), d.path()).error ==
        pre + "Failed to read file to update " + d.at("gone.txt") + ": " + kNoEnt);
  CHECK(verify(parsed_body("*** Update File: f.txt\n@@\n-zzz\n+b\n"), d.path()).error ==
        pre + "Failed to find expected lines in " + d.at("f.txt") + ":\nzzz");
  CHECK(verify(parsed_body("*** Update File: f.txt\n@@ ctx\n-a\n+b\n"), d.path()).error ==
        pre + "Failed to find context 'ctx' in " + d.at("f.txt"));
  // Like Rust's read_to_string, non-UTF-8 content cannot be read as text.
  CHECK(verify(parsed_body("*** Delete File: bin.dat\n"), d.path()).error ==
        pre + "Failed to read " + d.at("bin.dat") + ": stream did not contain valid UTF-8");
}

// --- all paths writable -------------------------------------------------------------------------

TEST_CASE("patch writable: paths are normalised and must stay under a root") {
  TempDir d;
  std::vector<std::string> roots = {d.path()};
  auto w = [&](const std::string& body) { return all_paths_writable(parsed_body(body), d.path(), roots); };
  CHECK(w("*** Add File: a.txt\n+x\n"));
  CHECK(w("*** Add File: ./sub/./b.txt\n+x\n"));
  CHECK(w("*** Add File: sub/../inside.txt\n+x\n"));
  CHECK_FALSE(w("*** Add File: ../outside.txt\n+x\n"));
  CHECK_FALSE(w("*** Delete File: sub/../../outside.txt\n"));
  CHECK_FALSE(w("*** Delete File: /etc/passwd\n"));
  CHECK(w("*** Delete File: " + d.at("x/../abs.txt") + "\n"));
  // A move destination counts too.
  CHECK_FALSE(w("*** Update File: a.txt\n*** Move to: ../b.txt\n@@\n-x\n+y\n"));
  CHECK(w("*** Update File: a.txt\n*** Move to: c/b.txt\n@@\n-x\n+y\n"));
  // The prefix test is per component.
  CHECK_FALSE(all_paths_writable(parsed_body("*** Add File: " + d.path() + "x/f\n+x\n"), "/", roots));
}

TEST_CASE("patch writable: /tmp and other roots, the root's .git directory is excluded") {
  TempDir d, other;
  std::vector<std::string> roots = {d.path(), "/tmp"};
  auto w = [&](const std::string& body) { return all_paths_writable(parsed_body(body), d.path(), roots); };
  CHECK(w("*** Add File: /tmp/llmx_apply_patch_elsewhere.txt\n+x\n"));
  CHECK(w("*** Add File: " + other.at("f.txt") + "\n+x\n"));
  CHECK_FALSE(all_paths_writable(parsed_body("*** Add File: /tmp/x\n+x\n"), d.path(), {d.path()}));

  // Without a .git directory nothing is excluded.
  CHECK(all_paths_writable(parsed_body("*** Add File: .git/config\n+x\n"), d.path(), {d.path()}));
  std::filesystem::create_directories(d.at(".git"));
  CHECK_FALSE(all_paths_writable(parsed_body("*** Add File: .git/config\n+x\n"), d.path(), {d.path()}));
  CHECK_FALSE(all_paths_writable(parsed_body("*** Delete File: sub/../.git/HEAD\n"), d.path(), {d.path()}));
  CHECK(all_paths_writable(parsed_body("*** Add File: .gitignore\n+x\n"), d.path(), {d.path()}));
  CHECK(all_paths_writable(parsed_body("*** Add File: sub/.git/config\n+x\n"), d.path(), {d.path()}));
  // Another root that contains the path still allows it.
  std::string parent = std::filesystem::path(d.path()).parent_path().string();
  CHECK(all_paths_writable(parsed_body("*** Add File: .git/config\n+x\n"), d.path(), {d.path(), parent}));
}

TEST_CASE("patch paths: join and lexical normalisation") {
  CHECK(join_path("/a/b", "c") == "/a/b/c");
  CHECK(join_path("/a/b/", "c") == "/a/b/c");
  CHECK(join_path("/a/b", "/abs") == "/abs");
  CHECK(normalize_path("/a/./b/../c//d/") == "/a/c/d");
  CHECK(normalize_path("/../x") == "/x");
  CHECK(normalize_path("/") == "/");
}

TEST_CASE("patch apply: through a client's files (ACP fs/*) the buffers are read and written, not the disk") {
  std::map<std::string, std::string> buffers{{"/w/upd.txt", "one\ntwo\nunsaved\n"}, {"/w/old.txt", "old\n"}};
  std::vector<std::string> removed;
  patch::FileAccess files;
  files.read = [&](const std::string& path) {
    auto it = buffers.find(path);
    return it != buffers.end() ? patch::Result<std::string>::ok(it->second) : patch::Result<std::string>::fail("not open");
  };
  files.write = [&](const std::string& path, const std::string& content) -> std::optional<std::string> {
    if (path.ends_with("refused.txt")) return std::string("read-only buffer");
    buffers[path] = content;
    return std::nullopt;
  };
  files.remove = [&](const std::string& path) -> std::optional<std::string> {
    removed.push_back(path);
    return std::nullopt;
  };
  Patch p = parsed_body(
      "*** Update File: upd.txt\n@@\n one\n-two\n+TWO\n"
      "*** Update File: old.txt\n*** Move to: new.txt\n@@\n-old\n+new\n"
      "*** Add File: added.txt\n+hi\n");
  CHECK(patch::files_read(p, "/w") == std::vector<std::string>{"/w/upd.txt", "/w/old.txt"});
  ApplyResult r = patch::apply(p, "/w", files);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "Success. Updated the following files:\nA added.txt\nM upd.txt\nM new.txt\n");
  CHECK(buffers["/w/upd.txt"] == "one\nTWO\nunsaved\n");
  CHECK(buffers["/w/new.txt"] == "new\n");
  CHECK(buffers["/w/added.txt"] == "hi\n");
  CHECK(removed == std::vector<std::string>{"/w/old.txt"});

  auto missing = patch::apply(parsed_body("*** Update File: closed.txt\n@@\n-a\n+b\n"), "/w", files);
  CHECK(missing.stderr_text == "Failed to read file to update closed.txt: not open\n");
  auto refused = patch::apply(parsed_body("*** Add File: refused.txt\n+x\n"), "/w", files);
  CHECK(refused.stderr_text == "Failed to write file refused.txt: read-only buffer\n");
}
