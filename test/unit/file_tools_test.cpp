// The optional file tools of DECISIONS E9 (protocol/workspace/file_tools.hpp): read_file's
// slices and indentation blocks, list_dir's listing, and grep_files' command and answer.
#include <doctest/doctest.h>

#include <filesystem>

#include "protocol/base/json_writer.hpp"
#include "protocol/model/tools.hpp"
#include "protocol/workspace/file_tools.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using namespace llmx::file_tools;

namespace {

std::string args(std::string_view key, const std::string& path, std::string_view more = {}) {
  json::Writer w;
  w.begin_object().field(key, path).end_object();
  auto text = w.take();
  if (!more.empty()) text = text.substr(0, text.size() - 1) + "," + std::string(more) + "}";
  return text;
}

constexpr std::string_view kCode =
    "// a comment\n"
    "struct A {\n"
    "  void f() {\n"
    "    int x = 1;\n"
    "    int y = 2;\n"
    "  }\n"
    "  void g() {\n"
    "    int z = 3;\n"
    "  }\n"
    "};\n"
    "int main() {}\r\n";

}  // namespace

TEST_CASE("file tools: read_file slices lines as L<n>, cuts long lines, strips CR, refuses bad arguments") {
  test::ScratchDir dir;
  auto path = dir.write("a.cpp", kCode);
  auto all = read_file(args("file_path", path));
  CHECK(all.success);
  CHECK(all.text.starts_with("L1: // a comment\nL2: struct A {"));
  CHECK(all.text.ends_with("L11: int main() {}"));
  auto slice = read_file(args("file_path", path, R"("offset":3,"limit":2)"));
  CHECK(slice.text == "L3:   void f() {\nL4:     int x = 1;");
  auto long_line = dir.write("long.txt", std::string(2000, 'x') + "\n");
  CHECK(read_file(args("file_path", long_line)).text.size() == 4 + 500);

  CHECK_FALSE(read_file(args("file_path", "relative.txt")).success);
  CHECK_FALSE(read_file(args("file_path", path, R"("offset":0)")).success);
  CHECK(read_file(args("file_path", path, R"("offset":99)")).text == "offset exceeds file length");
  CHECK(read_file(args("file_path", dir.file("missing"))).text.starts_with("failed to read file:"));
  CHECK(read_file("{").text.starts_with("failed to parse function arguments"));
  CHECK(read_file(args("file_path", "/dev/zero")).text.find("is not a regular file") != std::string::npos);
}

TEST_CASE("file tools: read_file's indentation mode shows the block, its parents' headers and comments") {
  test::ScratchDir dir;
  auto path = dir.write("a.cpp", kCode);
  // Anchor in f's body: the body's own lines, the headers of f and struct A, the comment above A.
  auto block = read_file(args("file_path", path, R"("mode":"indentation","indentation":{"anchor_line":4})"));
  CHECK(block.success);
  CHECK(block.text == "L1: // a comment\nL2: struct A {\nL3:   void f() {\nL4:     int x = 1;\nL5:     int y = 2;");
  // One level only: f's header, no struct, no comment.
  auto one = read_file(args("file_path", path, R"("mode":"indentation","indentation":{"anchor_line":4,"max_levels":1})"));
  CHECK(one.text == "L3:   void f() {\nL4:     int x = 1;\nL5:     int y = 2;");
  // Anchored at f itself with siblings: the whole body of A.
  auto siblings = read_file(args(
      "file_path", path, R"("mode":"indentation","indentation":{"anchor_line":3,"include_siblings":true,"include_header":false})"));
  CHECK(siblings.text.find("L7:   void g() {") != std::string::npos);
  CHECK(siblings.text.find("L9:   }") != std::string::npos);
  CHECK(siblings.text.find("L1:") == std::string::npos);
  CHECK_FALSE(read_file(args("file_path", path, R"("mode":"indentation","indentation":{"anchor_line":50})")).success);
}

TEST_CASE("file tools: list_dir lists depth-first with suffixes and says when it stopped") {
  test::ScratchDir dir;
  dir.write("b.txt", "");
  dir.write("a/inner.txt", "");
  dir.write("a/deep/deeper.txt", "");
  std::filesystem::create_symlink(dir.file("b.txt"), dir.file("link"));
  auto out = list_dir(args("dir_path", dir.path()));
  CHECK(out.success);
  CHECK(out.text == "Absolute path: " + dir.path() + "\na/\n  deep/\n  inner.txt\nb.txt\nlink@");
  auto paged = list_dir(args("dir_path", dir.path(), R"("limit":2)"));
  CHECK(paged.text == "Absolute path: " + dir.path() + "\na/\n  deep/\nMore than 2 entries found");
  auto deep = list_dir(args("dir_path", dir.path(), R"("depth":3,"offset":3,"limit":1)"));
  CHECK(deep.text == "Absolute path: " + dir.path() + "\n    deeper.txt\nMore than 1 entries found");
  CHECK_FALSE(list_dir(args("dir_path", dir.file("b.txt"))).success);
  CHECK_FALSE(list_dir(args("dir_path", "rel")).success);
}

TEST_CASE("file tools: grep_files builds ripgrep's command and reads its answer") {
  auto cmd = grep_command(R"({"pattern":"fo+","include":"*.rs","limit":5000})", "/work");
  REQUIRE_FALSE(cmd.error);
  CHECK(cmd.argv == std::vector<std::string>{"rg", "--files-with-matches", "--sortr=modified", "--regexp", "fo+",
                                             "--no-messages", "--glob", "*.rs", "--", "/work"});
  CHECK(cmd.limit == 2000);
  CHECK(grep_command(R"({"pattern":"x","path":"sub"})", "/work").argv.back() == "/work/sub");
  CHECK(grep_command(R"({"pattern":""})", "/w").error);
  CHECK(grep_output(1, "", "", 10).text == "No matches found.");
  CHECK_FALSE(grep_output(1, "", "", 10).success);
  auto hits = grep_output(0, "/w/a\n/w/b\n/w/c\n", "", 2);
  CHECK(hits.success);
  CHECK(hits.text == "/w/a\n/w/b");
  CHECK(grep_output(2, "", "regex parse error", 10).text.find("regex parse error") != std::string::npos);
}

TEST_CASE("file tools: offered only when flagged or listed by the family, every schema is JSON") {
  Config cfg;
  cfg.model = "gpt-4o";
  CHECK(tools::enabled_file_tools(cfg).empty());
  CHECK(tools::builtin_tools(cfg).size() == tools::default_tools().size());
  cfg.features.grep_files_tool = true;
  CHECK(tools::enabled_file_tools(cfg) == std::vector<std::string>{"grep_files"});
  cfg.model = "llmx-exp-1";  // a family that lists all three
  auto all = tools::builtin_tools(cfg);
  REQUIRE(all.size() == tools::default_tools().size() + 3);
  for (const auto& t : all) {
    json::Parser p;
    CHECK_NOTHROW(p.parse(t.parameters.text));
    CHECK_FALSE(t.description.empty());
  }
}
