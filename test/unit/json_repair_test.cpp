// Valid JSON simdjson cannot hold (huge numbers, lone surrogate escapes): rewritten, parsed,
// and a JSON-RPC request carrying it still classified with its own id.
#include "protocol/base/json_repair.hpp"

#include <doctest/doctest.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/jsonrpc.hpp"

using namespace llmx;

namespace {

std::string repaired(std::string_view text) {
  auto r = json::repair_unrepresentable(text);
  REQUIRE(r.has_value());
  return r->text;
}

}  // namespace

TEST_CASE("json repair: integers beyond 64 bits become floats of the same digits") {
  CHECK(repaired(R"({"a":123456789012345678901234567890})") == R"({"a":123456789012345678901234567890.0})");
  CHECK(repaired(R"([-9223372036854775809, 1])") == R"([-9223372036854775809.0, 1])");
  // The edges of 64 bits stay as they are; only the one beyond is rewritten.
  CHECK(repaired(R"([18446744073709551615,-9223372036854775808,18446744073709551616])") ==
        R"([18446744073709551615,-9223372036854775808,18446744073709551616.0])");
  // Beyond a double's range: a string of the text. Underflow is a plain zero for simdjson.
  CHECK(repaired(R"({"a":1e400,"b":1e-400})") == R"({"a":"1e400","b":1e-400})");
  CHECK(repaired("[" + std::string(400, '9') + "]") == "[\"" + std::string(400, '9') + "\"]");
}

TEST_CASE("json repair: lone surrogate escapes become U+FFFD, pairs stay") {
  CHECK(repaired(R"({"s":"a\uD800b"})") == R"({"s":"a\uFFFDb"})");
  CHECK(repaired(R"({"s":"\uDC00\ud83d"})") == R"({"s":"\uFFFD\uFFFD"})");
  CHECK(repaired(R"({"s":"\uD83D\uDE00 and \uD800"})") == R"({"s":"\uD83D\uDE00 and \uFFFD"})");
  // An escaped backslash before "uD800" is no escape; numbers inside strings are text.
  CHECK(repaired(R"(["\\uD800", "123456789012345678901234567890", 123456789012345678901234567890])") ==
        R"(["\\uD800", "123456789012345678901234567890", 123456789012345678901234567890.0])");
}

TEST_CASE("json repair: nothing to rewrite, or malformed, is nullopt") {
  CHECK_FALSE(json::repair_unrepresentable(R"({"a":1,"s":"\uD83D\uDE00"})").has_value());
  CHECK_FALSE(json::repair_unrepresentable(R"({"a":"unterminated)").has_value());
  CHECK_FALSE(json::repair_unrepresentable(R"({"s":"\uZZZZ","n":123456789012345678901234567890})").has_value());
  CHECK_FALSE(json::repair_unrepresentable("]").has_value());
  CHECK_FALSE(json::repair_unrepresentable("").has_value());
}

TEST_CASE("json repair: the parser reads such documents and keeps a rewritten top-level id") {
  json::Parser p;
  auto e = p.parse(R"({"id":123456789012345678901234567890,"params":{"n":99999999999999999999,"s":"\uD800"}})");
  CHECK(p.repaired_top_level_id() == std::optional<std::string>("123456789012345678901234567890"));
  CHECK(e["params"]["n"].is_double());
  CHECK(e["params"]["s"].get_string().value_unsafe() == "\xEF\xBF\xBD");
  // A nested "id" is not the message's.
  p.parse(R"({"id":1,"params":{"id":123456789012345678901234567890}})");
  CHECK_FALSE(p.repaired_top_level_id().has_value());
  p.parse(R"({"id":2})");
  CHECK_FALSE(p.repaired_top_level_id().has_value());
  CHECK_THROWS_AS(p.parse(R"({"id":1,"s":"\uD800)"), json::DecodeError);
}

TEST_CASE("json repair: a request with a huge id or huge params is classified with its id") {
  json::Parser p;
  auto root = p.parse(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})");
  auto in = rpc::classify(root, p.repaired_top_level_id());
  CHECK(in.kind == rpc::Incoming::Kind::request);
  CHECK(in.id.json == "123456789012345678901234567890");
  root = p.parse(R"({"jsonrpc":"2.0","id":"x","method":"ping","params":{"big":1e999,"s":"\uDBFF"}})");
  in = rpc::classify(root, p.repaired_top_level_id());
  CHECK(in.kind == rpc::Incoming::Kind::request);
  CHECK(in.id.json == R"("x")");
  // A float id stays refused, huge or not.
  root = p.parse(R"({"jsonrpc":"2.0","id":1e400,"method":"ping"})");
  in = rpc::classify(root, p.repaired_top_level_id());
  CHECK(in.kind == rpc::Incoming::Kind::invalid);
  CHECK(in.id.is_null());
}
