// Unit tests for the guard in front of toml++ (protocol/config/toml_guard.hpp): valid TOML with
// non-ASCII text parses as before, the places where toml++ would reach undefined behaviour are
// errors at their position, and the one valid such place is escaped to the same value. The
// sanitized tree runs these with UBSan's unreachable check on: without the guard, the error cases
// stop there.
#include "protocol/config/toml_guard.hpp"

#include <doctest/doctest.h>

using namespace llmx;

namespace {

// The parse error's line, column and description, or an empty description when it parsed.
struct Failure {
  toml::source_index line = 0, column = 0;
  std::string what, file;
};

Failure failure_of(std::string_view text) {
  try {
    parse_toml(text, "config.toml");
  } catch (const toml::parse_error& e) {
    return {e.source().begin.line, e.source().begin.column, std::string(e.description()),
            e.source().path ? *e.source().path : std::string()};
  }
  return {};
}

std::string string_at(std::string_view text, std::string_view key) {
  auto t = parse_toml(text);
  return t[key].value_or(std::string("<missing>"));
}

}  // namespace

TEST_CASE("toml_guard: text without the risky places is handed over as it is") {
  CHECK_FALSE(guard_toml_text("model = \"gpt\"\n[profiles.fast]\nmodel = 'x'\n").text);
  // Non-ASCII inside every kind of string, in quoted keys and in comments is ordinary TOML.
  const std::string text =
      "# Привет, ü ğ ш\n"
      "a = \"Жук ü\"  # π\n"
      "b = 'ÜBER ш'\n"
      "c = \"\"\"\nδέλτα\n\"\"\"\n"
      "d = '''\nα\\β'''\n"
      "\"ключ\" = \"q\\\"é\"\n"
      "e = \"\\u00e9\"\n";
  CHECK_FALSE(guard_toml_text(text).text);
  auto t = parse_toml(text);
  CHECK(t["a"].value_or(std::string()) == "Жук ü");
  CHECK(t["b"].value_or(std::string()) == "ÜBER ш");
  CHECK(t["c"].value_or(std::string()) == "δέλτα\n");
  CHECK(t["d"].value_or(std::string()) == "α\\β");
  CHECK(t["ключ"].value_or(std::string()) == "q\"é");
  CHECK(t["e"].value_or(std::string()) == "é");
  // A byte order mark is not a character outside a string.
  CHECK(string_at("\xEF\xBB\xBFm = \"ш\"\n", "m") == "ш");
  // Strings begin wherever a key or value does: dotted and header keys, arrays, inline tables.
  const std::string nested =
      "projects.\"/home/ü\".trust = 'x'\n"
      "[ tables . \"й\" ]\n"
      "a = [1, \"é\",\n  # c\n  'ш', [\"ж\"], { \"ы\" = \"q\", b.\"э\" = 1.5 }]\n"
      "[[arr]]\n"
      "\"ю\" = 2\n";
  CHECK_FALSE(guard_toml_text(nested).text);
  auto n = parse_toml(nested);
  CHECK(n["projects"]["/home/ü"]["trust"].value_or(std::string()) == "x");
  CHECK(n["tables"]["й"]["a"][1].value_or(std::string()) == "é");
  CHECK(n["tables"]["й"]["a"][4]["b"]["э"].value_or(0.0) == 1.5);
  CHECK(n["arr"][0]["ю"].value_or(0) == 2);
}

TEST_CASE("toml_guard: a quote inside a bare value does not begin a string") {
  // toml++ scans a bare value up to a terminator, quotes included (the fuzzer's second find,
  // through a client's config edit).
  auto f = failure_of("_x_ = 063.0.0.1K:410\x06" "0\"é\"\n");
  CHECK(f.column == 24);
  CHECK(f.what.find("non-ASCII character outside") != std::string::npos);
  CHECK(failure_of("a = 1.\"é\"\n").column == 8);
  CHECK(failure_of("a = [1.'é']\n").column == 9);
  CHECK(failure_of("a = { b = 2.\"é\" }\n").column == 14);
  CHECK(failure_of("a = \"x\"\"é\"\n").column == 9);
  CHECK(failure_of("_x_ = 0:41/tmn/llmx-f/=\"é\"\n").column == 25);  // the third find: `=`
  CHECK(failure_of("a = 1[\"é\"]\n").column == 8);
  CHECK(failure_of("a = [1 \"é\"]\n").column == 9);
}

TEST_CASE("toml_guard: a non-ASCII character outside strings and comments is an error at its place") {
  // The fuzzer's find: U+0310 in a table header.
  auto f = failure_of("[a\xCC\x90]\nx = 1\n");
  CHECK(f.line == 1);
  CHECK(f.column == 3);
  CHECK(f.what.find("non-ASCII character outside a string or comment") != std::string::npos);
  CHECK(f.file == "config.toml");
  // A bare key, after a value, between array items; columns count characters, not bytes.
  CHECK(failure_of("ключ = 1\n").column == 1);
  f = failure_of("a = \"ш\"\nb = 1é\n");
  CHECK(f.line == 2);
  CHECK(f.column == 6);
  f = failure_of("a = [1, 'ш',\u00a0 2]\n");
  CHECK(f.line == 1);
  CHECK(f.column == 13);
  // A string's end is found past escaped quotes and multi-line closings with extra quotes.
  CHECK(failure_of("a = \"\\\"\" é\n").column == 10);
  CHECK(failure_of("a = \"\"\"x\"\"\"\" é\n").column == 14);
  CHECK(failure_of("a = '''x'''' é\n").column == 14);
}

TEST_CASE("toml_guard: a backslash followed by a non-ASCII character is an error") {
  auto f = failure_of("a = \"x\\ш\"\n");
  CHECK(f.column == 8);
  CHECK(f.what.find("backslash followed by a non-ASCII character") != std::string::npos);
  CHECK(failure_of("a = \"\"\"\n\\ш\"\"\"\n").line == 2);
  f = failure_of("a = \"\"\"x\\  ш\n\"\"\"\n");
  CHECK(f.line == 1);
  CHECK(f.column == 12);
}

TEST_CASE("toml_guard: after a line-ending backslash a non-ASCII character is escaped, same value") {
  const std::string text = "a = \"\"\"one \\\n    Жук \\\r\n\n\t\xF0\x9F\x98\x80 end\"\"\"\nb = 2\n";
  auto guarded = guard_toml_text(text);
  REQUIRE(guarded.text);
  CHECK(guarded.text->find("\\u0416ук") != std::string::npos);
  CHECK(guarded.text->find("\\U0001F600 end") != std::string::npos);
  // Positions toml++ reports after an escape map back to the text as written.
  REQUIRE(guarded.escapes.size() == 2);
  CHECK(guarded.escapes[0].line == 2);
  CHECK(guarded.escapes[0].column == 5);
  CHECK(guarded.original({2, 4}).column == 4);
  CHECK(guarded.original({2, 5}).column == 5);
  CHECK(guarded.original({2, 9}).column == 5);
  CHECK(guarded.original({2, 11}).column == 6);
  CHECK(guarded.original({4, 12}).column == 3);
  CHECK(guarded.original({3, 12}).column == 12);
  auto t = parse_toml(text);
  CHECK(t["a"].value_or(std::string()) == "one Жук \xF0\x9F\x98\x80 end");
  CHECK(t["b"].value_or(0) == 2);
  // Lines still count as written: an error after the string names its own line.
  CHECK(failure_of(text + "c = é\n").line == 6);
}
