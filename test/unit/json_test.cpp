#include <doctest/doctest.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/core/ops.hpp"

using namespace llmx;

namespace {
std::string roundtrip_string(std::string_view s) {
  json::Writer w;
  w.string(s);
  json::Parser p;
  auto e = p.parse(w.str());
  return std::string(e.get_string().value_unsafe());
}
}  // namespace

TEST_CASE("writer escapes quotes, backslashes and control characters") {
  json::Writer w;
  w.string("a\"b\\c\n\r\t\b\f\x01\x1f");
  CHECK(w.str() == R"("a\"b\\c\n\r\t\b\f\u0001\u001f")");
}

TEST_CASE("writer never emits a raw newline") {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  json::Writer w;
  w.string(all);
  CHECK(w.str().find('\n') == std::string::npos);
  CHECK(w.str().find('\r') == std::string::npos);
}

TEST_CASE("valid non-ASCII UTF-8 passes through unchanged") {
  std::string s = "héllo wörld — 日本語 🎉";
  json::Writer w;
  w.string(s);
  CHECK(w.str() == "\"" + s + "\"");
  CHECK(roundtrip_string(s) == s);
}

TEST_CASE("invalid UTF-8 is replaced by U+FFFD") {
  CHECK(roundtrip_string("a\xff" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(roundtrip_string("\xC3") == "\xEF\xBF\xBD");                  // truncated sequence
  CHECK(roundtrip_string("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  CHECK(roundtrip_string("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(json::sanitize_utf8("ok\xfe") == "ok\xEF\xBF\xBD");
}

TEST_CASE("every byte string round-trips through simdjson after sanitising") {
  for (int a = 0; a < 256; ++a) {
    std::string s = {'x', static_cast<char>(a), 'y'};
    CHECK(roundtrip_string(s) == json::sanitize_utf8(s));
  }
}

TEST_CASE("writer handles nesting and commas") {
  json::Writer w;
  w.begin_object().field("a", int64_t{1}).key("b").begin_array().number(int64_t{1}).string("x").null()
      .begin_object().end_object().end_array().field("c", true).field("d", 1.5).end_object();
  CHECK(w.str() == R"({"a":1,"b":[1,"x",null,{}],"c":true,"d":1.5})");
}

TEST_CASE("writer keeps commas right in containers nested deeper than 64") {
  for (int depth : {1, 63, 64, 65, 130}) {
    json::Writer w;
    w.begin_array();
    std::string want = "[";
    for (int i = 0; i < depth; ++i) {
      w.begin_array().number(i);
      want += "[" + std::to_string(i) + ",";
    }
    w.number(-1);
    want += "-1";
    for (int i = depth - 1; i >= 0; --i) {
      w.end_array().number(i);
      want += "]," + std::to_string(i);
    }
    w.end_array();
    want += "]";
    CAPTURE(depth);
    CHECK(w.str() == want);
    json::Parser p;
    CHECK_NOTHROW(p.parse(w.str()));
  }
}

TEST_CASE("a writer with a target appends to it in place") {
  std::string lines = "first";
  {
    json::Writer w(lines);
    w.begin_object().field("a", 1).plain_key("b").begin_array().end_array().end_object();
  }
  CHECK(lines == R"(first{"a":1,"b":[]})");
}

TEST_CASE("plain strings and keys of every length around the short-copy buffer are quoted whole") {
  for (size_t n : {0, 1, 60, 61, 62, 63, 64, 200}) {
    const std::string s(n, 'k');
    json::Writer w;
    w.begin_object().plain_key(s).string(s).key(s).string(s).end_object();
    CAPTURE(n);
    const std::string q = "\"" + s + "\"";
    CHECK(w.str() == "{" + q + ":" + q + "," + q + ":" + q + "}");
  }
}

TEST_CASE("doubles keep a fraction and non-finite values become null") {
  json::Writer w;
  w.begin_array().number(2.0).number(0.1).number(1e300 * 1e300).end_array();
  CHECK(w.str() == "[2.0,0.1,null]");
}

TEST_CASE("events encode with their tag and snake_case fields") {
  Event e{"1", AgentMessageDeltaEvent{"Hi"}};
  CHECK(json::to_json(e) == R"({"id":"1","msg":{"type":"agent_message_delta","delta":"Hi"}})");
  Event done{"1", TaskCompleteEvent{}};
  CHECK(json::to_json(done) == R"({"id":"1","msg":{"type":"task_complete","last_agent_message":null}})");
  Event started{"", SessionConfiguredEvent{"abc", "m", std::nullopt, 0, 0, std::nullopt, "/x"}};
  CHECK(json::to_json(started) ==
        R"({"id":"","msg":{"type":"session_configured","session_id":"abc","model":"m","history_log_id":0,"history_entry_count":0,"rollout_path":"/x"}})");
}

TEST_CASE("externally tagged unions and base64 chunks") {
  FileChange c = FileUpdate{"@@ -1 +1 @@\n", std::nullopt};
  CHECK(json::to_json(c) == R"({"update":{"unified_diff":"@@ -1 +1 @@\n","move_path":null}})");
  auto back = json::parse_as<FileChange>(json::to_json(c));
  REQUIRE(back.get_if<FileUpdate>());
  CHECK(back.get_if<FileUpdate>()->unified_diff == "@@ -1 +1 @@\n");
  ExecCommandOutputDeltaEvent d{"c1", "stdout", Base64Bytes{"README.md\n"}};
  CHECK(json::to_json(EventMsg{d}) ==
        R"({"type":"exec_command_output_delta","call_id":"c1","stream":"stdout","chunk":"UkVBRE1FLm1kCg=="})");
}

TEST_CASE("ops decode from the core JSON shape") {
  auto sub = json::parse_as<Submission>(
      R"({"id":"3","op":{"type":"user_input","items":[{"type":"text","text":"hello"},{"type":"local_image","path":"/tmp/a.png"}]}})");
  CHECK(sub.id == "3");
  auto* in = sub.op.get_if<UserInputOp>();
  REQUIRE(in);
  REQUIRE(in->items.size() == 2);
  CHECK(in->items[0].get_if<TextInput>()->text == "hello");
  CHECK(in->items[1].get_if<LocalImageInput>()->path == "/tmp/a.png");
  auto turn = json::parse_as<Submission>(
      R"({"id":"5","op":{"type":"user_turn","items":[],"cwd":"/p","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write","network_access":true},"model":"m","summary":"auto","final_output_json_schema":null}})");
  auto* t = turn.op.get_if<UserTurnOp>();
  REQUIRE(t);
  CHECK(t->sandbox_policy.mode == SandboxMode::workspace_write);
  CHECK(t->sandbox_policy.network_access);
  CHECK(t->final_output_json_schema.is_null());
}

TEST_CASE("decode errors name the field") {
  CHECK_THROWS_WITH_AS(json::parse_as<Submission>(R"({"id":"1"})"), "missing field `op`", json::DecodeError);
  CHECK_THROWS_WITH_AS(json::parse_as<Submission>(R"({"id":"1","op":{"type":"user_input","items":[{"type":"text","text":5}]}})"),
                       "invalid type: expected string, got integer at `op.items.0.text`", json::DecodeError);
  CHECK_THROWS_WITH_AS(json::parse_as<Submission>(R"({"id":"1","op":{"type":"nope"}})"),
                       doctest::Contains("unknown variant `nope`"), json::DecodeError);
  CHECK_THROWS_WITH_AS(json::parse_as<SandboxPolicy>(R"({"mode":"wide-open"})"),
                       doctest::Contains("wide-open"), json::DecodeError);
  CHECK_THROWS_AS(json::parse_as<Submission>("{not json"), json::DecodeError);
}

TEST_CASE("sandbox policy accepts camelCase keys and omits extras outside workspace-write") {
  auto p = json::parse_as<SandboxPolicy>(R"({"type":"workspaceWrite","writableRoots":["/a"],"networkAccess":true})");
  CHECK(p.mode == SandboxMode::workspace_write);
  CHECK(p.writable_roots == std::vector<std::string>{"/a"});
  CHECK(p.network_access);
  CHECK(json::to_json(SandboxPolicy{}) == R"({"mode":"read-only"})");
}

namespace {
struct Holder {
  RawJson value;
  LLMX_FIELDS(v("value", s.value))
};
}  // namespace

TEST_CASE("raw JSON values are kept verbatim and compact") {
  auto h = json::parse_as<Holder>(R"({"value": {"a": [1, 2, {"b": null}]}})");
  CHECK(h.value.text == R"({"a":[1,2,{"b":null}]})");
  CHECK(json::to_json(h) == R"({"value":{"a":[1,2,{"b":null}]}})");
}

TEST_CASE("escaping finds special bytes at every offset of the 16- and 8-byte fast paths") {
  for (std::string special : {"\"", "\\", "\n", "\x01", "\x1f", "\xc3\xa9", "\xff", "\x7f", " "}) {
    for (size_t pos = 0; pos < 56; ++pos) {
      std::string s(56, 'a');
      s.insert(pos, special);
      CHECK(roundtrip_string(s) == json::sanitize_utf8(s));
    }
  }
}

TEST_CASE("parsers alive at once on one thread never share the buffers their pool lends") {
  json::Parser outer;
  auto a = outer.parse(R"({"name":"outer","n":[1,2,3]})");
  {
    json::Parser inner;  // comes from the same thread's pool while `outer` holds its own
    auto b = inner.parse(R"({"name":"inner"})");
    CHECK(json::get_string(b.get_object().value(), "name") == "inner");
  }
  json::Parser after;  // reuses what `inner` gave back
  auto c = after.parse(R"({"name":"after","big":")" + std::string(100000, 'x') + R"("})");
  CHECK(json::get_string(c.get_object().value(), "name") == "after");
  CHECK(json::get_string(a.get_object().value(), "name") == "outer");
  CHECK(json::to_text(a) == R"({"name":"outer","n":[1,2,3]})");

  json::Parser moved = std::move(outer);  // the element stays valid: the buffers moved, not copied
  CHECK(json::to_text(a) == R"({"name":"outer","n":[1,2,3]})");
  outer = json::Parser();  // a moved-from parser can be given a new one and used again
  CHECK(json::to_text(outer.parse("[true]")) == "[true]");
}

TEST_CASE("scratch writers hand out exact copies, also when one is nested in another") {
  json::ScratchWriter outer;
  outer.begin_object().field("a", std::string(5000, 'a'));
  std::string inner_text;
  {
    json::ScratchWriter inner;  // the thread's kept buffer is with `outer`: this one is fresh
    inner.begin_array().string("x").end_array();
    inner_text = inner.take_exact();
  }
  outer.end_object();
  CHECK(inner_text == R"(["x"])");
  auto text = outer.take_exact();
  CHECK(text == R"({"a":")" + std::string(5000, 'a') + R"("})");
  json::ScratchWriter again;  // reuses a kept buffer: starts empty
  again.begin_array().end_array();
  CHECK(again.take_exact() == "[]");
}
