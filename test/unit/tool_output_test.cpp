// Unit tests for model output truncation and the exec output text form (engine.md §5.8, §5.9;
// DECISIONS E10): exact boundaries, head/tail shapes, UTF-8 safe cuts.
#include "protocol/model/tool_output.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace llmx;

namespace {

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

// Lines "L1\n" .. "L<n>\n" for first..last.
std::string numbered(size_t first, size_t last) {
  std::string out;
  for (size_t i = first; i <= last; ++i) out += "L" + std::to_string(i) + "\n";
  return out;
}

const std::string kByteMarker = "\n[... output truncated to fit 10240 bytes ...]\n\n";

}  // namespace

TEST_CASE("tool_output: line counting follows lines()") {
  CHECK(count_lines("") == 0);
  CHECK(count_lines("a") == 1);
  CHECK(count_lines("a\n") == 1);
  CHECK(count_lines("a\nb") == 2);
  CHECK(count_lines("\n\n") == 2);
}

TEST_CASE("tool_output: text within 10240 bytes and 256 lines is unchanged") {
  CHECK(truncate_for_model("") == "");
  CHECK(truncate_for_model("hello\n") == "hello\n");
  std::string exact = repeat(repeat("x", 39) + "\n", 256);  // exactly 10240 bytes, 256 lines
  REQUIRE(exact.size() == 10240);
  CHECK(truncate_for_model(exact) == exact);
  std::string lines256 = repeat("a\n", 256);
  CHECK(truncate_for_model(lines256) == lines256);
  CHECK(kByteMarker.size() == 48);
}

TEST_CASE("tool_output: 257 lines drop one line between head and tail") {
  std::string text = numbered(1, 257);
  std::string expected = "Total output lines: 257\n\n" + numbered(1, 128) +
                         "\n[... omitted 1 of 257 lines ...]\n\n" + numbered(130, 257);
  CHECK(truncate_for_model(text) == expected);
  // A last line without newline counts too.
  std::string text2 = repeat("a\n", 256) + "b";
  CHECK(truncate_for_model(text2) == "Total output lines: 257\n\n" + repeat("a\n", 128) +
                                         "\n[... omitted 1 of 257 lines ...]\n\n" +
                                         repeat("a\n", 127) + "b");
}

TEST_CASE("tool_output: 10241 bytes in 256 lines is cut by bytes") {
  std::string text;
  for (int i = 1; i <= 256; ++i) {
    std::string num = std::to_string(1000 + i).substr(1);
    text += num + repeat("x", i == 256 ? 37 : 36) + "\n";
  }
  REQUIRE(text.size() == 10241);
  std::string expected = "Total output lines: 256\n\n" + text.substr(0, 5120) + kByteMarker +
                         text.substr(10241 - 5072);
  CHECK(truncate_for_model(text) == expected);
  CHECK(truncate_for_model(text).size() == 25 + 10240);
}

TEST_CASE("tool_output: a huge single line keeps 5120 head bytes and the tail") {
  CHECK(truncate_for_model(repeat("a", 10241)) ==
        "Total output lines: 1\n\n" + repeat("a", 5120) + kByteMarker + repeat("a", 5072));
  std::string huge = repeat("h", 50000) + repeat("t", 50000);
  CHECK(truncate_for_model(huge) ==
        "Total output lines: 1\n\n" + repeat("h", 5120) + kByteMarker + repeat("t", 5072));
}

TEST_CASE("tool_output: many long lines are cut by lines and bytes") {
  std::string text;
  for (int i = 0; i < 300; ++i) text += repeat(std::string(1, char('A' + i % 26)), 99) + "\n";
  const std::string marker = "\n[... omitted 44 of 300 lines ...]\n\n";
  REQUIRE(marker.size() == 36);
  std::string expected = "Total output lines: 300\n\n" + text.substr(0, 5120) + marker +
                         text.substr(30000 - 5084);
  CHECK(truncate_for_model(text) == expected);
}

TEST_CASE("tool_output: cuts never split a UTF-8 character") {
  const std::string e = "\xc3\xa9";  // é, 2 bytes
  // Byte 5120 falls inside an é: the head keeps 5119 bytes, the tail starts at the next char.
  std::string text = "a" + repeat(e, 6000);
  CHECK(truncate_for_model(text) ==
        "Total output lines: 1\n\na" + repeat(e, 2559) + kByteMarker + repeat(e, 2536));

  const std::string smile = "\xf0\x9f\x98\x80";  // 4 bytes
  std::string text4 = "ab" + repeat(smile, 3000);
  CHECK(truncate_for_model(text4) ==
        "Total output lines: 1\n\nab" + repeat(smile, 1279) + kByteMarker + repeat(smile, 1268));

  CHECK(utf8_prefix("a\xc3\xa9", 2) == "a");
  CHECK(utf8_prefix("a\xc3\xa9", 3) == "a\xc3\xa9");
  CHECK(utf8_suffix("\xc3\xa9z", 2) == "z");
  CHECK(utf8_suffix("\xe2\x82\xac", 2) == "");
}

TEST_CASE("tool_output: exec output text form") {
  CHECK(format_exec_output("hello\n", 0, 1.0, false, 10000) ==
        "Exit code: 0\nWall time: 1 seconds\nOutput:\nhello\n");
  CHECK(format_exec_output("", 2, 12.345, false, 10000) ==
        "Exit code: 2\nWall time: 12.3 seconds\nOutput:\n");
  CHECK(format_exec_output("x", 0, 2.96, false, 10000) == "Exit code: 0\nWall time: 3 seconds\nOutput:\nx");
  CHECK(format_exec_output("x", 0, 0.0, false, 10000) == "Exit code: 0\nWall time: 0 seconds\nOutput:\nx");
  CHECK(format_exec_output("x", -1, 1234.56, false, 10000) ==
        "Exit code: -1\nWall time: 1234.6 seconds\nOutput:\nx");
  CHECK(format_exec_output("partial", 124, 10.0, true, 10000) ==
        "Exit code: 124\nWall time: 10 seconds\nOutput:\ncommand timed out after 10000 milliseconds\npartial");
}

TEST_CASE("tool_output: truncated exec output states the line count once") {
  CHECK(format_exec_output(numbered(1, 300), 1, 0.5, false, 10000) ==
        "Exit code: 1\nWall time: 0.5 seconds\nTotal output lines: 300\nOutput:\n" + numbered(1, 128) +
            "\n[... omitted 44 of 300 lines ...]\n\n" + numbered(173, 300));
  // The timeout line is part of the body, so it is counted and kept in the head.
  CHECK(format_exec_output(numbered(1, 256), 124, 5.0, true, 5000) ==
        "Exit code: 124\nWall time: 5 seconds\nTotal output lines: 257\nOutput:\n"
        "command timed out after 5000 milliseconds\n" +
            numbered(1, 127) + "\n[... omitted 1 of 257 lines ...]\n\n" + numbered(129, 256));
}

TEST_CASE("tool_output: UI error messages are middle-truncated to 2048 bytes") {
  std::string fits = repeat("x", 2048);
  CHECK(truncate_middle(fits) == fits);
  CHECK(truncate_middle(repeat("a", 1500) + repeat("b", 1500)) ==
        repeat("a", 1009) + "[... 982 bytes truncated ...]" + repeat("b", 1009));
  std::string r = truncate_middle(repeat("\xc3\xa9", 2000));
  CHECK(r == repeat("\xc3\xa9", 504) + "[... 1984 bytes truncated ...]" + repeat("\xc3\xa9", 504));
  CHECK(truncate_middle(repeat("z", 2049)).size() <= 2048);
  CHECK(truncate_middle("abcdefghij", 6) == "abcdef");
}
