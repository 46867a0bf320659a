// Table-driven stream tests, one fixture per provider dialect (issue 6): SSE streams written from
// the providers' documented shapes (OpenAI, Anthropic and Gemini behind LiteLLM, DeepSeek,
// vLLM / Ollama, Azure OpenAI), each fed through the SSE decoder and the Chat stream parser
// whole and split at every byte, must give the same items, finish reason and usage.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/model/chat_stream.hpp"
#include "protocol/base/json_codec.hpp"
#include "transport/sse_decoder.hpp"

using namespace llmx;

namespace {

struct Outcome {
  std::vector<std::string> items;  // JSON of every finished item, in order
  std::string completed;           // JSON of the Completed event ("" when none)
  std::string text, reasoning;     // the streamed deltas, joined
  ChatStreamParser::Status status = ChatStreamParser::Status::more;
  std::string error;
};

Outcome parse(const std::vector<std::string>& parts) {
  sse::Decoder dec;
  ChatStreamParser p("call_t");
  std::vector<ModelEvent> evs;
  Outcome o;
  auto on_event = [&](sse::Event&& e) {
    if (o.status == ChatStreamParser::Status::more) o.status = p.on_data(e.data, evs);
  };
  for (const auto& part : parts) dec.feed(part, on_event);
  dec.finish(on_event);
  if (o.status == ChatStreamParser::Status::more) o.status = p.on_end(evs);
  for (const auto& e : evs) {
    if (auto d = e.get_if<ItemDone>()) o.items.push_back(json::to_json(d->item));
    if (auto c = e.get_if<Completed>()) o.completed = json::to_json(*c);
    if (auto t = e.get_if<TextDelta>()) o.text += t->text;
    if (auto r = e.get_if<ReasoningDelta>()) o.reasoning += r->text;
  }
  o.error = p.error_message();
  return o;
}

std::string sse_text(const std::vector<std::string>& data) {
  std::string s;
  for (const auto& d : data) s += "data: " + d + "\n\n";
  return s;
}

std::string message(const std::string& text) {
  return R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":")" + text + R"("}]})";
}
std::string call(const std::string& name, const std::string& args, const std::string& id) {
  return R"({"type":"function_call","name":")" + name + R"(","arguments":)" + json::to_json(args) +
         R"(,"call_id":")" + id + R"("})";
}
std::string finished(const std::string& reason, const std::string& usage) {
  return "{" + (usage.empty() ? std::string() : R"("usage":)" + usage + ",") +
         R"("finish_reason":")" + reason + R"("})";
}
std::string usage(int in, int cached, int out, int reasoning, int total) {
  return "{\"input_tokens\":" + std::to_string(in) + ",\"cached_input_tokens\":" + std::to_string(cached) +
         ",\"output_tokens\":" + std::to_string(out) + ",\"reasoning_output_tokens\":" + std::to_string(reasoning) +
         ",\"total_tokens\":" + std::to_string(total) + "}";
}

struct Dialect {
  std::string name;
  std::vector<std::string> stream;  // SSE data payloads
  std::vector<std::string> items;
  std::string completed;
  std::string text, reasoning;
};

const std::string kLs = R"({"command":["ls"]})";
const std::string kPatch = R"({"input":"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"})";

std::vector<Dialect> dialects() {
  std::vector<Dialect> d;
  // OpenAI: role chunk with refusal, usage:null on every chunk, a choices:[] usage chunk last.
  d.push_back({"openai text",
               {R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null})",
                R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null})",
                R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null})",
                R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null})",
                R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}})",
                "[DONE]"},
               {message("Hello world")},
               finished("stop", usage(20, 0, 2, 0, 22)),
               "Hello world",
               ""});
  d.push_back({"openai shell",
               {R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}]})",
                R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_Ab12","type":"function","function":{"name":"shell","arguments":""}}]},"logprobs":null,"finish_reason":null}]})",
                R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]},"logprobs":null,"finish_reason":null}]})",
                R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"[\"ls\"]}"}}]},"logprobs":null,"finish_reason":null}]})",
                R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]})",
                "[DONE]"},
               {call("shell", kLs, "call_Ab12")},
               finished("tool_calls", ""),
               "",
               ""});
  // Claude behind LiteLLM: reasoning_content plus signed thinking_blocks, text then tool_use at
  // content-block index 1 with null ids on the fragments, cache fields in the usage.
  d.push_back({"anthropic shell with thinking",
               {R"({"choices":[{"index":0,"delta":{"reasoning_content":"Let me","thinking_blocks":[{"type":"thinking","thinking":"Let me","signature":null}],"role":"assistant"}}]})",
                R"({"choices":[{"index":0,"delta":{"reasoning_content":" list.","thinking_blocks":[{"type":"thinking","thinking":" list.","signature":null}]}}]})",
                R"({"choices":[{"index":0,"delta":{"reasoning_content":"","thinking_blocks":[{"type":"thinking","thinking":"","signature":"EqoBsig=="}]}}]})",
                R"({"choices":[{"index":0,"delta":{"content":"Listing.","role":"assistant"}}]})",
                R"({"choices":[{"index":0,"delta":{"content":"","tool_calls":[{"id":"toolu_01A","function":{"arguments":"","name":"shell"},"type":"function","index":1}]}}]})",
                R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":null,"function":{"arguments":"{\"command\":","name":null},"type":"function","index":1}]}}]})",
                R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":null,"function":{"arguments":"[\"ls\"]}","name":null},"type":"function","index":1}]}}]})",
                R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
                R"({"choices":[],"usage":{"completion_tokens":30,"prompt_tokens":100,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":50},"cache_creation_input_tokens":0,"cache_read_input_tokens":50}})",
                "[DONE]"},
               {R"({"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Let me list."}],"encrypted_content":"[{\"type\":\"thinking\",\"thinking\":\"Let me list.\",\"signature\":\"EqoBsig==\"}]"})",
                message("Listing."), call("shell", kLs, "toolu_01A")},
               finished("tool_calls", usage(100, 50, 30, 0, 130)),
               "Listing.",
               "Let me list."});
  // Gemini behind LiteLLM: whole calls in one chunk each, no ids, both at index 0, and `stop`.
  d.push_back({"gemini parallel shell",
               {R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"Running."}}]})",
                R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]}}]})",
                R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"shell","arguments":"{\"command\":[\"pwd\"]}"}}]}}]})",
                R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})",
                "[DONE]"},
               {message("Running."), call("shell", kLs, "call_t_0"), call("shell", R"({"command":["pwd"]})", "call_t_1")},
               finished("stop", usage(10, 0, 5, 0, 15)),
               "Running.",
               ""});
  // DeepSeek: reasoning_content while thinking (content null), cache hits, usage with the finish.
  d.push_back({"deepseek shell with reasoning",
               {R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Think"}}]})",
                R"({"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"ing."}}]})",
                R"({"choices":[{"index":0,"delta":{"content":"","reasoning_content":null,"tool_calls":[{"index":0,"id":"call_0_1a2b","type":"function","function":{"name":"shell","arguments":""}}]}}]})",
                R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":[\"ls\"]}"}}]}}]})",
                R"({"choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52,"prompt_tokens_details":{"cached_tokens":0},"prompt_cache_hit_tokens":10,"prompt_cache_miss_tokens":30,"completion_tokens_details":{"reasoning_tokens":5}}})",
                "[DONE]"},
               {R"({"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Thinking."}],"encrypted_content":null})",
                call("shell", kLs, "call_0_1a2b")},
               finished("tool_calls", usage(40, 10, 12, 5, 52)),
               "",
               "Thinking."});
  // vLLM / Ollama: whole arguments in one chunk, no ids, usage alone after the finish.
  d.push_back({"vllm apply_patch",
               {R"({"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
                R"({"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Add File: a.txt\\n+hi\\n*** End Patch\\n\"}"}}]},"logprobs":null,"finish_reason":null}]})",
                R"({"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]})",
                R"({"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"total_tokens":10,"completion_tokens":3}})",
                "[DONE]"},
               {call("apply_patch", kPatch, "call_t_0")},
               finished("tool_calls", usage(7, 0, 3, 0, 10)),
               "",
               ""});
  // Azure: a prompt_filter_results chunk with no choices first, content_filter_results on every
  // choice, and the content filter ending the answer.
  d.push_back({"azure content filter",
               {R"({"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]})",
                R"({"choices":[{"content_filter_results":{},"delta":{"role":"assistant","content":""},"finish_reason":null,"index":0,"logprobs":null}],"created":1,"id":"chatcmpl-az","model":"gpt-4o","object":"chat.completion.chunk"})",
                R"({"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"Partial"},"finish_reason":null,"index":0,"logprobs":null}],"created":1,"id":"chatcmpl-az","model":"gpt-4o","object":"chat.completion.chunk"})",
                R"({"choices":[{"content_filter_results":{"violence":{"filtered":true,"severity":"high"}},"delta":{},"finish_reason":"content_filter","index":0,"logprobs":null}],"created":1,"id":"chatcmpl-az","model":"gpt-4o","object":"chat.completion.chunk"})",
                "[DONE]"},
               {message("Partial")},
               finished("content_filter", ""),
               "Partial",
               ""});
  return d;
}

}  // namespace

TEST_CASE("dialects: every provider's stream gives the same items however the bytes are split") {
  for (const auto& d : dialects()) {
    CAPTURE(d.name);
    auto bytes = sse_text(d.stream);
    auto whole = parse({bytes});
    CHECK(whole.status == ChatStreamParser::Status::done);
    CHECK(whole.error.empty());
    CHECK(whole.items == d.items);
    CHECK(whole.completed == d.completed);
    CHECK(whole.text == d.text);
    CHECK(whole.reasoning == d.reasoning);
    for (size_t i = 1; i < bytes.size(); i += 7) {  // every 7th split point (all of them for one below)
      auto split = parse({bytes.substr(0, i), bytes.substr(i)});
      REQUIRE(split.items == whole.items);
      REQUIRE(split.completed == whole.completed);
    }
  }
}

TEST_CASE("dialects: the Anthropic stream split at every single byte") {
  auto d = dialects()[2];
  auto bytes = sse_text(d.stream);
  std::vector<std::string> bytewise;
  for (char c : bytes) bytewise.emplace_back(1, c);
  auto r = parse(bytewise);
  CHECK(r.items == d.items);
  CHECK(r.completed == d.completed);
}

TEST_CASE("dialects: a repeated name with no arguments on a finished call does not invent a call") {
  auto r = parse({sse_text({R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]}}]})",
                       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"shell","arguments":""}}]}}]})",
                       R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})", "[DONE]"})});
  CHECK(r.items == std::vector<std::string>{call("shell", kLs, "call_t_0")});
}

TEST_CASE("dialects: a second id on an index opens a new call only once the first call is complete") {
  auto r = parse({sse_text({R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a1","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]}}]})",
                       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b2","function":{"name":"shell","arguments":"{\"command\":[\"pwd\"]}"}}]}}]})",
                       R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})", "[DONE]"})});
  CHECK(r.items == std::vector<std::string>{call("shell", kLs, "a1"), call("shell", R"({"command":["pwd"]})", "b2")});
}

TEST_CASE("dialects: invalid UTF-8 inside a chunk is repaired, not dropped") {
  std::string bad = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xC3\x28 ok \xFF end\"}}]}\n\n";
  auto r = parse({bad + sse_text({R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", "[DONE]"})});
  CHECK(r.status == ChatStreamParser::Status::done);
  CHECK(r.text == "caf\xEF\xBF\xBD( ok \xEF\xBF\xBD end");
}

TEST_CASE("dialects: a 10 MB single event is one delta") {
  std::string big(10u << 20, 'x');
  for (size_t i = 99; i < big.size(); i += 100) big[i] = ' ';
  auto r = parse({sse_text({R"({"choices":[{"index":0,"delta":{"content":")" + big + R"("}}]})",
                       R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", "[DONE]"})});
  CHECK(r.status == ChatStreamParser::Status::done);
  CHECK(r.text.size() == big.size());
}

TEST_CASE("dialects: an empty answer (role chunk and stop) completes with no items") {
  auto r = parse({sse_text({R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
                       R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", "[DONE]"})});
  CHECK(r.status == ChatStreamParser::Status::done);
  CHECK(r.items.empty());
  CHECK(r.completed == finished("stop", ""));
}

TEST_CASE("dialects: a redacted thinking block is kept for passing back") {
  auto r = parse({sse_text({R"({"choices":[{"index":0,"delta":{"thinking_blocks":[{"type":"redacted_thinking","data":"EmwKAhgB"}]}}]})",
                       R"({"choices":[{"index":0,"delta":{"content":"ok"}}]})",
                       R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", "[DONE]"})});
  REQUIRE(r.items.size() == 2);
  CHECK(r.items[0] ==
        R"({"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":""}],"encrypted_content":"[{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgB\"}]"})");
}
