// Unit tests for the Chat Completions stream parser (engine.md §2.5–2.6, DECISIONS E1–E5):
// SSE `data` strings in, ModelEvents out. Events are compared through their JSON encoding.
#include "protocol/model/chat_stream.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"
#include "transport/sse_decoder.hpp"

using llmx::ChatStreamParser;
using llmx::ModelEvent;
using Status = ChatStreamParser::Status;

namespace {

struct Run {
  std::vector<std::string> events;  // JSON of each ModelEvent
  Status status = Status::more;
  std::string error;
};

std::vector<std::string> as_json(const std::vector<ModelEvent>& evs) {
  std::vector<std::string> out;
  for (const auto& e : evs) out.push_back(llmx::json::to_json(e));
  return out;
}

// Feeds each data string until the parser stops asking for more; then, when `end` is set and
// the parser still wants more, reports the end of the byte stream.
Run run(const std::vector<std::string>& data, bool end = true, const std::string& prefix = "call") {
  ChatStreamParser p(prefix);
  std::vector<ModelEvent> evs;
  Run r;
  for (const auto& d : data) {
    r.status = p.on_data(d, evs);
    if (r.status != Status::more) break;
  }
  if (r.status == Status::more && end) r.status = p.on_end(evs);
  r.events = as_json(evs);
  r.error = p.error_message();
  return r;
}

std::string delta(const std::string& delta_json, const std::string& finish = "null") {
  return R"({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":)" + delta_json +
         R"(,"finish_reason":)" + finish + "}]}";
}
std::string content(const std::string& text) { return delta(R"({"content":")" + text + R"("})"); }
std::string finish(const std::string& reason) { return delta("{}", "\"" + reason + "\""); }

std::string text_delta(const std::string& t) { return R"({"type":"text_delta","text":")" + t + R"("})"; }
std::string reasoning_delta(const std::string& t) {
  return R"({"type":"reasoning_delta","text":")" + t + R"("})";
}
std::string message_done(const std::string& t) {
  return R"({"type":"item_done","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":")" +
         t + R"("}]}})";
}
std::string reasoning_done(const std::string& t) {
  return R"({"type":"item_done","item":{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":")" +
         t + R"("}],"encrypted_content":null}})";
}
// `args` is the JSON text of the arguments, as it appears unescaped.
std::string call_done(const std::string& name, const std::string& args, const std::string& id) {
  return R"({"type":"item_done","item":{"type":"function_call","name":")" + name + R"(","arguments":)" +
         llmx::json::to_json(args) + R"(,"call_id":")" + id + R"("}})";
}
std::string completed(const std::string& reason, const std::string& usage = "") {
  return R"({"type":"completed",)" + (usage.empty() ? "" : R"("usage":)" + usage + ",") +
         R"("finish_reason":")" + reason + R"("})";
}
std::string usage_json(int in, int cached, int out, int reasoning, int total) {
  return "{\"input_tokens\":" + std::to_string(in) + ",\"cached_input_tokens\":" + std::to_string(cached) +
         ",\"output_tokens\":" + std::to_string(out) + ",\"reasoning_output_tokens\":" +
         std::to_string(reasoning) + ",\"total_tokens\":" + std::to_string(total) + "}";
}

// A tool-call fragment: {"index":i, "id":..., "function":{"name":..., "arguments":...}}.
std::string tc(int index, const std::string& id, const std::string& name, const std::string& args) {
  std::string s = "{\"index\":" + std::to_string(index);
  if (!id.empty()) s += R"(,"id":")" + id + R"(","type":"function")";
  s += R"(,"function":{)";
  bool comma = false;
  if (!name.empty()) {
    s += R"("name":")" + name + "\"";
    comma = true;
  }
  if (comma) s += ",";
  s += R"("arguments":)" + llmx::json::to_json(args) + "}}";
  return s;
}
std::string calls(const std::vector<std::string>& fragments) {
  std::string s = R"({"tool_calls":[)";
  for (size_t i = 0; i < fragments.size(); ++i) s += (i ? "," : "") + fragments[i];
  return delta(s + "]}");
}

}  // namespace

TEST_CASE("chat stream: plain text deltas, then the message item and completion") {
  auto r = run({delta(R"({"role":"assistant","content":""})"), content("Hel"), content("lo"), finish("stop"),
                "[DONE]"});
  CHECK(r.status == Status::done);
  CHECK(r.events == std::vector<std::string>{text_delta("Hel"), text_delta("lo"), message_done("Hello"),
                                             completed("stop")});
}

TEST_CASE("chat stream: tool call whose id and name arrive after the first arguments") {
  auto r = run({calls({tc(0, "", "", R"({"command":)")}), calls({tc(0, "toolu_9", "shell", R"(["ls"]})")}),
                finish("tool_calls"), "[DONE]"});
  CHECK(r.events ==
        std::vector<std::string>{call_done("shell", R"({"command":["ls"]})", "toolu_9"), completed("tool_calls")});
}

TEST_CASE("chat stream: id and name resent on every chunk are not duplicated") {
  auto r = run({calls({tc(0, "toolu_1", "shell", "")}), calls({tc(0, "toolu_1", "shell", R"({"a")")}),
                calls({tc(0, "toolu_1", "shell", R"(:1})")}), finish("tool_calls"), "[DONE]"});
  CHECK(r.events == std::vector<std::string>{call_done("shell", R"({"a":1})", "toolu_1"), completed("tool_calls")});
}

TEST_CASE("chat stream: id, name and arguments split across chunks are joined") {
  auto r = run({calls({tc(0, "toolu", "sh", "")}), calls({tc(0, "_1", "ell", R"({"x")")}),
                calls({tc(0, "", "", R"(:"y"})")}), finish("tool_calls"), "[DONE]"});
  CHECK(r.events == std::vector<std::string>{call_done("shell", R"({"x":"y"})", "toolu_1"), completed("tool_calls")});
}

TEST_CASE("chat stream: a call without id gets a stable synthesised id with the prefix") {
  std::vector<std::string> data = {calls({tc(0, "", "shell", R"({})")}), calls({tc(1, "", "update_plan", R"({})")}),
                                   finish("tool_calls"), "[DONE]"};
  auto a = run(data, true, "conv7-turn2");
  auto b = run(data, true, "conv7-turn2");
  CHECK(a.events == b.events);  // same stream, same ids
  ChatStreamParser p("conv7-turn2");
  std::vector<ModelEvent> evs;
  for (auto& d : data) p.on_data(d, evs);
  std::vector<std::string> ids;
  for (auto& e : evs)
    if (auto done = e.get_if<llmx::ItemDone>())
      if (auto c = done->item.get_if<llmx::FunctionCallItem>()) ids.push_back(c->call_id);
  REQUIRE(ids.size() == 2);
  CHECK(ids[0].rfind("conv7-turn2", 0) == 0);
  CHECK(ids[1].rfind("conv7-turn2", 0) == 0);
  CHECK(ids[0] != ids[1]);
  // A different prefix (another turn) gives different ids for the same indexes.
  auto c = run(data, true, "conv7-turn3");
  CHECK(c.events != a.events);
}

TEST_CASE("chat stream: parallel calls interleaved by index, after the text item, in index order") {
  auto r = run({content("Let me look."),
                calls({tc(1, "call_b", "read_file", "")}),  // index 1 starts first
                calls({tc(0, "call_a", "shell", "")}),
                calls({tc(0, "", "", R"({"command":)"), tc(1, "", "", R"({"path":)")}),  // both in one chunk
                calls({tc(1, "", "", R"("x"})")}),
                calls({tc(0, "", "", R"(["ls"]})")}),
                finish("tool_calls"), "[DONE]"});
  CHECK(r.events == std::vector<std::string>{
                        text_delta("Let me look."),
                        message_done("Let me look."),
                        call_done("shell", R"({"command":["ls"]})", "call_a"),
                        call_done("read_file", R"({"path":"x"})", "call_b"),
                        completed("tool_calls"),
                    });
}

TEST_CASE("chat stream: tool calls without an index are told apart by their position") {
  std::string chunk = delta(
      R"({"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}},{"id":"b","function":{"name":"g","arguments":"{}"}}]})");
  auto r = run({chunk, finish("tool_calls")});
  CHECK(r.events == std::vector<std::string>{call_done("f", "{}", "a"), call_done("g", "{}", "b"),
                                             completed("tool_calls")});
}

TEST_CASE("chat stream: finish_reason stop with tool calls still yields the calls (E2)") {
  auto r = run({content("ok"), calls({tc(0, "t1", "shell", R"({"command":["pwd"]})")}), finish("stop"), "[DONE]"});
  CHECK(r.status == Status::done);
  CHECK(r.events == std::vector<std::string>{text_delta("ok"), message_done("ok"),
                                             call_done("shell", R"({"command":["pwd"]})", "t1"), completed("stop")});
}

TEST_CASE("chat stream: finish_reason length ends normally with the truncated text") {
  auto r = run({content("partial"), finish("length"), "[DONE]"});
  CHECK(r.status == Status::done);
  CHECK(r.events == std::vector<std::string>{text_delta("partial"), message_done("partial"), completed("length")});
}

TEST_CASE("chat stream: length with a tool call keeps the call (E2)") {
  auto r = run({calls({tc(0, "t1", "shell", R"({})")}), finish("length"), "[DONE]"});
  CHECK(r.events == std::vector<std::string>{call_done("shell", "{}", "t1"), completed("length")});
}

TEST_CASE("chat stream: no finish_reason but [DONE] completes with the items") {
  auto r = run({content("hi"), calls({tc(0, "t1", "shell", R"({})")}), "[DONE]"});
  CHECK(r.status == Status::done);
  CHECK(r.events ==
        std::vector<std::string>{text_delta("hi"), message_done("hi"), call_done("shell", "{}", "t1"), completed("")});
}

TEST_CASE("chat stream: usage in a separate chunk after the finish chunk is read (E4)") {
  auto r = run({content("a"), finish("stop"),
                R"({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}})",
                "[DONE]"});
  CHECK(r.status == Status::done);
  CHECK(r.events == std::vector<std::string>{text_delta("a"), message_done("a"),
                                             completed("stop", usage_json(100, 0, 20, 0, 120))});
}

TEST_CASE("chat stream: usage after the finish chunk is read even when the stream just closes") {
  auto r = run({content("a"), finish("stop"),
                R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}})"});
  CHECK(r.status == Status::done);
  CHECK(r.events ==
        std::vector<std::string>{text_delta("a"), message_done("a"), completed("stop", usage_json(5, 0, 6, 0, 11))});
}

TEST_CASE("chat stream: cached and reasoning tokens from the detail objects") {
  auto r = run({content("a"),
                R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":12}}})",
                "[DONE]"});
  CHECK(r.events.back() == completed("stop", usage_json(100, 64, 30, 12, 130)));
}

TEST_CASE("chat stream: cached tokens from cache_read_input_tokens (Anthropic via LiteLLM)") {
  auto r = run({content("a"), finish("stop"),
                R"({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"cache_read_input_tokens":80,"prompt_tokens_details":null}})",
                "[DONE]"});
  CHECK(r.events.back() == completed("stop", usage_json(100, 80, 30, 0, 130)));
}

TEST_CASE("chat stream: a later usage chunk replaces an earlier one") {
  auto r = run({R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})",
                content("a"), finish("stop"),
                R"({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14}})", "[DONE]"});
  CHECK(r.events.back() == completed("stop", usage_json(10, 0, 4, 0, 14)));
}

TEST_CASE("chat stream: reasoning_content and reasoning both become reasoning deltas (E5)") {
  SUBCASE("reasoning_content") {
    auto r = run({delta(R"({"reasoning_content":"think "})"), delta(R"({"reasoning_content":"hard"})"),
                  content("done"), finish("stop"), "[DONE]"});
    CHECK(r.events == std::vector<std::string>{reasoning_delta("think "), reasoning_delta("hard"), text_delta("done"),
                                               reasoning_done("think hard"), message_done("done"), completed("stop")});
  }
  SUBCASE("reasoning as a string") {
    auto r = run({delta(R"({"reasoning":"abc"})"), finish("stop")});
    CHECK(r.events == std::vector<std::string>{reasoning_delta("abc"), reasoning_done("abc"), completed("stop")});
  }
  SUBCASE("reasoning as an object with text or content") {
    auto r = run({delta(R"({"reasoning":{"text":"x"}})"), delta(R"({"reasoning":{"content":"y"}})"), finish("stop")});
    CHECK(r.events ==
          std::vector<std::string>{reasoning_delta("x"), reasoning_delta("y"), reasoning_done("xy"), completed("stop")});
  }
  SUBCASE("both names in one delta: no duplicate") {
    auto r = run({delta(R"({"reasoning_content":"same","reasoning":"same"})"), content("ok"), finish("stop")});
    CHECK(r.events == std::vector<std::string>{reasoning_delta("same"), text_delta("ok"), reasoning_done("same"),
                                               message_done("ok"), completed("stop")});
  }
  SUBCASE("empty or null reasoning is ignored") {
    auto r = run({delta(R"({"reasoning_content":null,"reasoning":"","content":"t"})"), finish("stop")});
    CHECK(r.events == std::vector<std::string>{text_delta("t"), message_done("t"), completed("stop")});
  }
}

TEST_CASE("chat stream: an error object inside a 200 stream is an error") {
  SUBCASE("with a message") {
    auto r = run({content("a"), R"({"error":{"message":"Rate limit reached","type":"rate_limit"}})", finish("stop")});
    CHECK(r.status == Status::error);
    CHECK(r.error == "unexpected status 200 OK: Rate limit reached");
  }
  SUBCASE("without a message") {
    auto r = run({R"({"error":{"code":500}})"});
    CHECK(r.status == Status::error);
    CHECK(r.error == "unexpected status 200 OK: Unknown error");
  }
  SUBCASE("a null error is not an error") {
    auto r = run({R"({"error":null,"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]})"});
    CHECK(r.status == Status::done);
    CHECK(r.events == std::vector<std::string>{text_delta("x"), message_done("x"), completed("stop")});
  }
}

TEST_CASE("chat stream: malformed JSON events are skipped") {
  auto clean = run({content("a"), content("b"), finish("stop"), "[DONE]"});
  auto noisy = run({"{not json", content("a"), "", "[1,2", "42", "\"str\"", content("b"), "{\"choices\":",
                    finish("stop"), "[DONE]"});
  CHECK(noisy.status == Status::done);
  CHECK(noisy.events == clean.events);
}

TEST_CASE("chat stream: odd but valid chunks are ignored") {
  auto r = run({R"({"choices":[]})", R"({"choices":null})", R"({})", R"({"choices":[{"index":0}]})",
                delta(R"({"content":null})"), delta(R"({"content":""})"), content("x"), finish("stop")});
  CHECK(r.events == std::vector<std::string>{text_delta("x"), message_done("x"), completed("stop")});
}

TEST_CASE("chat stream: stream end without a finish is an error") {
  auto r = run({content("a"), calls({tc(0, "t", "shell", "{")})});
  CHECK(r.status == Status::error);
  CHECK(r.error == "stream disconnected before completion: stream closed before response.completed");
  CHECK(r.events == std::vector<std::string>{text_delta("a")});  // nothing completed
}

TEST_CASE("chat stream: an empty stream is an error too") {
  auto r = run({});
  CHECK(r.status == Status::error);
  CHECK(r.error == "stream disconnected before completion: stream closed before response.completed");
  CHECK(r.events.empty());
}

TEST_CASE("chat stream: end after the finish chunk without [DONE] is done") {
  ChatStreamParser p;
  std::vector<ModelEvent> evs;
  CHECK(p.on_data(content("a"), evs) == Status::more);
  CHECK(p.on_data(finish("stop"), evs) == Status::more);  // keeps reading for usage (E4)
  CHECK(p.saw_finish_reason());
  CHECK_FALSE(p.finished());
  CHECK(p.on_end(evs) == Status::done);
  CHECK(p.finished());
  CHECK(as_json(evs) == std::vector<std::string>{text_delta("a"), message_done("a"), completed("stop")});
  // Nothing after the end changes anything.
  CHECK(p.on_end(evs) == Status::done);
  CHECK(p.on_data(content("late"), evs) == Status::done);
  CHECK(evs.size() == 3);
}

TEST_CASE("chat stream: [DONE] is recognised with surrounding whitespace") {
  auto r = run({content("a"), " [DONE]\n"}, false);
  CHECK(r.status == Status::done);
  CHECK(r.events == std::vector<std::string>{text_delta("a"), message_done("a"), completed("")});
}

// The whole pipeline: bytes -> SseDecoder -> ChatStreamParser, split at every byte.
namespace {

const std::vector<std::string> kScenario = {
    delta(R"({"role":"assistant","reasoning_content":"plan"})"),
    content("I'll run it."),
    calls({tc(0, "call_a", "shell", R"({"command":)")}),
    calls({tc(1, "call_b", "shell", R"({"command":["pwd"]})")}),
    calls({tc(0, "call_a", "shell", R"(["ls"]})")}),
    finish("tool_calls"),
    R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":8,"total_tokens":17,"prompt_tokens_details":{"cached_tokens":4}}})",
    "[DONE]",
};

std::string sse_bytes() {
  std::string s = ": OPENROUTER PROCESSING\r\n\r\n";
  for (size_t i = 0; i < kScenario.size(); ++i)
    s += (i % 2 ? "data: " : "data:") + kScenario[i] + (i % 3 == 0 ? "\r\n\r\n" : "\n\n");
  return s;
}

Run pipeline(const std::vector<std::string>& parts) {
  llmx::sse::Decoder dec;
  ChatStreamParser p("x");
  std::vector<ModelEvent> evs;
  Run r;
  auto on_event = [&](llmx::sse::Event&& e) {
    if (r.status == Status::more) r.status = p.on_data(e.data, evs);
  };
  bool ok = true;
  for (const auto& part : parts) ok = dec.feed(part, on_event) && ok;
  if (!ok) r.error = "sse feed failed";
  dec.finish(on_event);
  if (r.status == Status::more) r.status = p.on_end(evs);
  r.events = as_json(evs);
  r.error += p.error_message();
  return r;
}

}  // namespace

TEST_CASE("chat stream: the whole scenario through the SSE decoder gives the same events however split") {
  auto bytes = sse_bytes();
  auto whole = pipeline({bytes});
  REQUIRE(whole.status == Status::done);
  CHECK(whole.events == std::vector<std::string>{
                            reasoning_delta("plan"),
                            text_delta("I'll run it."),
                            reasoning_done("plan"),
                            message_done("I'll run it."),
                            call_done("shell", R"({"command":["ls"]})", "call_a"),
                            call_done("shell", R"({"command":["pwd"]})", "call_b"),
                            completed("tool_calls", usage_json(9, 4, 8, 0, 17)),
                        });
  for (size_t i = 0; i <= bytes.size(); ++i) {
    CAPTURE(i);
    auto split = pipeline({bytes.substr(0, i), bytes.substr(i)});
    CHECK(split.status == Status::done);
    CHECK(split.error.empty());
    CHECK(split.events == whole.events);
  }
  std::vector<std::string> bytewise;
  for (char c : bytes) bytewise.emplace_back(1, c);
  CHECK(pipeline(bytewise).events == whole.events);
}
