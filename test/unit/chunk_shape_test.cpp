// Chunks read by their proven shape (protocol/model/chunk_shape.hpp): the shape's own split and
// decoding, and ChatStreamParser yielding exactly what parsing every chunk yields.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"
#include "protocol/model/chat_stream.hpp"

using namespace llmx;

namespace {

const std::string kHead = R"({"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":)";

std::string text_chunk(std::string_view token) { return kHead + R"({"content":)" + std::string(token) + R"(},"finish_reason":null}]})"; }

struct ShapeRun {
  std::vector<std::string> events;  // JSON of each event
  std::vector<ChatStreamParser::Status> statuses;
  size_t shape_reads = 0;
};

ShapeRun read_stream(const std::vector<std::string>& chunks, bool reuse) {
  ChatStreamParser p("call");
  p.reuse_shapes(reuse);
  std::vector<ModelEvent> out;
  ShapeRun r;
  for (const auto& c : chunks) {
    r.statuses.push_back(p.on_data(c, out));
    if (r.statuses.back() != ChatStreamParser::Status::more) break;
  }
  if (r.statuses.back() == ChatStreamParser::Status::more) r.statuses.push_back(p.on_end(out));
  for (const auto& e : out) r.events.push_back(json::to_json(e));
  r.shape_reads = p.shape_reads();
  return r;
}

// Both ways give the same events and statuses; returns how many chunks went by their shape.
size_t same_both_ways(const std::vector<std::string>& chunks) {
  auto fast = read_stream(chunks, true), slow = read_stream(chunks, false);
  CHECK(fast.events == slow.events);
  CHECK(fast.statuses == slow.statuses);
  CHECK(slow.shape_reads == 0);
  return fast.shape_reads;
}

}  // namespace

TEST_CASE("a chunk shape splits around the first string value of its key") {
  ChunkShape s;
  json::Parser p;
  CHECK_FALSE(s.learn(R"({"delta":{"role":"assistant"}})", "content"));
  CHECK_FALSE(s.known());
  CHECK_FALSE(s.learn(R"({"content":null})", "content"));
  CHECK_FALSE(s.learn(R"({"content":"unterminated)", "content"));
  REQUIRE(s.learn(R"({"a":{"content" :  "x\"y"},"b":"content"})", "content"));
  CHECK(s.with_token(R"("T")") == R"({"a":{"content" :  "T"},"b":"content"})");
  CHECK(s.text_of(R"({"a":{"content" :  "plain"},"b":"content"})", p) == "plain");
  CHECK(s.text_of(R"({"a":{"content" :  "esc \"q\" \n \u00e9"},"b":"content"})", p) == "esc \"q\" \n \u00e9");
  CHECK(s.text_of(R"({"a":{"content" :  ""},"b":"content"})", p) == "");
  // Not of the shape, or not one string token between head and tail.
  CHECK_FALSE(s.text_of(R"({"a":{"content" : "x"},"b":"content"})", p));
  CHECK_FALSE(s.text_of(R"({"a":{"content" :  "x"},"b":"contents"})", p));
  CHECK_FALSE(s.text_of(R"({"a":{"content" :  "x","y":"z"},"b":"content"})", p));
  CHECK_FALSE(s.text_of(R"({"a":{"content" :  "x\"},"b":"content"})", p));
  CHECK_FALSE(s.text_of(R"({"a":{"content" :  7},"b":"content"})", p));
  CHECK_FALSE(s.text_of("{\"a\":{\"content\" :  \"raw\ncontrol\"},\"b\":\"content\"}", p));
  // Invalid UTF-8 is left to the full parse, which repairs it.
  CHECK_FALSE(s.text_of("{\"a\":{\"content\" :  \"bad \xff\"},\"b\":\"content\"}", p));
  CHECK_FALSE(s.text_of("{\"a\":{\"content\" :  \"bad \\n \xc3\"},\"b\":\"content\"}", p));
  s.forget();
  CHECK_FALSE(s.text_of(R"({"a":{"content" :  "plain"},"b":"content"})", p));
}

TEST_CASE("a stream of one shape is read without parsing and yields what the parse yields") {
  std::vector<std::string> chunks = {kHead + R"({"role":"assistant","content":""},"finish_reason":null}]})"};
  for (auto token : {R"("Hel")", R"("lo")", R"(" \"wo\\nrld\"")", R"(" caf\u00e9 ")", R"("")", "\"\xff bad\"",
                     R"("\ud800 lone")", R"("end")"})
    chunks.push_back(text_chunk(token));
  chunks.push_back(kHead + R"({},"finish_reason":"stop"}]})");
  chunks.push_back("[DONE]");
  // The first text chunk proves the shape; the other five with text go by it. The empty one and
  // the one with invalid UTF-8 are parsed.
  CHECK(same_both_ways(chunks) == 5);
}

TEST_CASE("a chunk of the shape that is not one more text is parsed") {
  std::vector<std::string> chunks = {text_chunk(R"("a")"), text_chunk(R"("b")"),
                                     // The middle is three tokens: it carries a finish reason.
                                     text_chunk(R"("c"},"finish_reason":"length","x":{"y":"z")"), text_chunk(R"("d")"),
                                     text_chunk(R"("e","content":"f")")};
  CHECK(same_both_ways(chunks) == 2);  // "b" and "d"
}

TEST_CASE("reasoning chunks have their shape too, and a second reasoning key is not mistaken for it") {
  auto reasoning = [](std::string_view a, std::string_view b) {
    return kHead + R"({"reasoning_content":)" + std::string(a) + R"(,"reasoning":)" + std::string(b) +
           R"(},"finish_reason":null}]})";
  };
  std::vector<std::string> chunks = {reasoning(R"("think")", "null"), reasoning(R"("ing")", "null"),
                                     // Both keys carry the same text: the first one counts.
                                     reasoning(R"("same")", R"("same")"),
                                     // The first key is empty: the text is the second key's.
                                     reasoning(R"("")", R"("other")"), reasoning(R"("")", R"("key")"),
                                     reasoning(R"("")", R"("")"), text_chunk(R"("answer")"), text_chunk(R"("!")")};
  // "ing" by the first shape; "key" by the shape on "reasoning"; "!" by the text's shape.
  CHECK(same_both_ways(chunks) == 3);
}

TEST_CASE("usage, tool calls and errors in a chunk keep it from proving a shape") {
  std::vector<std::string> chunks = {
      kHead + R"({"content":"a"},"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":2}})",
      kHead + R"({"content":"b"},"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":3}})",
      kHead + R"({"content":"c","tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"["}}]},"finish_reason":null}]})",
      // The same piece of arguments each time: every chunk adds it.
      kHead + R"({"content":"d","tool_calls":[{"index":0,"function":{"arguments":"["}}]},"finish_reason":null}]})",
      kHead + R"({"content":"e","tool_calls":[{"index":0,"function":{"arguments":"["}}]},"finish_reason":null}]})",
      kHead + R"({"content":"f","tool_calls":[{"index":0,"function":{"arguments":"["}}]},"finish_reason":"tool_calls"}]})",
      R"({"error":{"message":"e","content":"x"}})", R"({"error":{"message":"e","content":"y"}})"};
  CHECK(same_both_ways(chunks) == 0);
}

TEST_CASE("a stream whose every chunk differs outside its text is parsed chunk by chunk") {
  std::vector<std::string> chunks;
  for (int i = 0; i < 40; ++i)
    chunks.push_back(R"({"id":"c)" + std::to_string(i) + R"(","choices":[{"delta":{"content":"t"}}]})");
  CHECK(same_both_ways(chunks) == 0);
}
