// The Responses wire (engine.md §3): the exact request body, and the stream parser over every
// event kind llmx reads, including failures and their retry classification.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"
#include "protocol/model/chat_request.hpp"
#include "protocol/model/responses_request.hpp"
#include "protocol/model/responses_stream.hpp"
#include "protocol/model/retry_policy.hpp"
#include "transport/model_stream_reader.hpp"

using namespace llmx;

namespace {

Prompt responses_prompt() {
  Prompt p;
  p.model = "gpt-5";
  p.instructions = "You are llmx.";
  p.conversation_id = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  p.tools = {ToolSpec{"shell", "Runs a command.", RawJson{R"({"type":"object","properties":{}})"}}};
  ReasoningItem r;
  r.summary = {SummaryText{"thought"}};
  r.encrypted_content = std::string("gAAAA-enc");
  ReasoningItem chat_thinking;  // signed Anthropic blocks from the Chat wire: not replayable here
  chat_thinking.encrypted_content = std::string(R"([{"type":"thinking"}])");
  p.input = {user_message("list"), chat_thinking, r, FunctionCallItem{"shell", R"({"command":["ls"]})", "c1"},
             FunctionCallOutputItem{"c1", "a.txt"}, assistant_message("done")};
  return p;
}

struct Run {
  std::vector<std::string> events;
  ResponsesStreamParser::Status status = ResponsesStreamParser::Status::more;
  ResponsesStreamParser parser;
};

Run run(const std::vector<std::string>& data, bool end = true) {
  Run r;
  std::vector<ModelEvent> evs;
  for (const auto& d : data) {
    r.status = r.parser.on_data(d, evs);
    if (r.status != ResponsesStreamParser::Status::more) break;
  }
  if (end && r.status == ResponsesStreamParser::Status::more) r.status = r.parser.on_end(evs);
  for (const auto& e : evs) r.events.push_back(json::to_json(e));
  return r;
}

const std::string kCompleted =
    R"({"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":20},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":59}}})";

}  // namespace

TEST_CASE("responses request: the exact body, with reasoning and the conversation as cache key") {
  ModelProviderInfo provider;
  provider.wire_api = WireApi::responses;
  auto p = responses_prompt();
  p.reasoning = true;
  p.reasoning_effort = "high";
  p.reasoning_summary = "detailed";
  p.parallel_tool_calls = true;
  CHECK(build_responses_request(p, provider) ==
        R"({"model":"gpt-5","instructions":"You are llmx.","input":[)"
        R"({"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]},)"
        R"({"type":"reasoning","summary":[{"type":"summary_text","text":"thought"}],"encrypted_content":"gAAAA-enc"},)"
        R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"},)"
        R"({"type":"function_call_output","call_id":"c1","output":"a.txt"},)"
        R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}],)"
        R"("tools":[{"type":"function","name":"shell","description":"Runs a command.","strict":false,"parameters":{"type":"object","properties":{}}}],)"
        R"("tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"effort":"high","summary":"detailed"},"store":false,"stream":true,)"
        R"("include":["reasoning.encrypted_content"],"prompt_cache_key":"0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c"})");
}

TEST_CASE("responses request: no reasoning support, verbosity, max_tokens, Azure stores") {
  ModelProviderInfo azure;
  azure.name = "Azure";
  azure.max_tokens = 1000;
  auto p = responses_prompt();
  p.input = {user_message("hi")};
  p.verbosity = "low";
  auto body = build_responses_request(p, azure);
  CHECK(body.find(R"("reasoning":null,"store":true,"stream":true,"include":[])") != std::string::npos);
  CHECK(body.ends_with(R"("text":{"verbosity":"low"},"max_output_tokens":1000})"));
  ModelProviderInfo by_url;
  by_url.base_url = "https://myco.openai.azure.com/openai";
  CHECK(is_azure_provider(by_url));
  CHECK_FALSE(is_azure_provider(ModelProviderInfo{}));
}

TEST_CASE("responses stream: text, reasoning summary, a call, then completion with usage") {
  auto r = run({
      R"({"type":"response.created","response":{"id":"resp_1","status":"in_progress"}})",
      R"({"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}})",
      R"({"type":"response.reasoning_summary_part.added","item_id":"rs_1","summary_index":0})",
      R"({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","delta":"Plan"})",
      R"({"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan"}],"encrypted_content":"gAAA"}})",
      R"({"type":"response.output_text.delta","item_id":"msg_1","delta":"Hi"})",
      R"({"type":"response.output_text.done","item_id":"msg_1","text":"Hi"})",
      R"({"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]}})",
      R"({"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{}"})",
      R"({"type":"response.output_item.done","output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","name":"shell","call_id":"call_1","arguments":"{\"command\":[\"ls\"]}"}})",
      R"({"type":"response.output_item.done","output_index":3,"item":{"id":"ws_1","type":"web_search_call","status":"completed"}})",
      kCompleted,
      R"({"type":"response.output_text.delta","delta":"after the end"})",
  });
  CHECK(r.status == ResponsesStreamParser::Status::done);
  CHECK(r.events == std::vector<std::string>{
                        R"({"type":"reasoning_delta","text":"Plan"})",
                        R"({"type":"item_done","item":{"type":"reasoning","summary":[{"type":"summary_text","text":"Plan"}],"encrypted_content":"gAAA"}})",
                        R"({"type":"text_delta","text":"Hi"})",
                        R"({"type":"item_done","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}})",
                        R"({"type":"item_done","item":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}})",
                        R"({"type":"completed","usage":{"input_tokens":50,"cached_input_tokens":20,"output_tokens":9,"reasoning_output_tokens":4,"total_tokens":59},"finish_reason":""})",
                    });
}

TEST_CASE("responses stream: an incomplete response ends like Chat's length or content_filter") {
  auto length = run({R"({"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}})"});
  CHECK(length.status == ResponsesStreamParser::Status::done);
  CHECK(length.events.back() == R"({"type":"completed","finish_reason":"length"})");
  auto filtered = run({R"({"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}})"});
  CHECK(filtered.events.back() == R"({"type":"completed","finish_reason":"content_filter"})");
}

TEST_CASE("responses stream: failures are fatal or retryable by their code") {
  auto context = run({R"({"type":"response.failed","response":{"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}})"});
  CHECK(context.status == ResponsesStreamParser::Status::error);
  CHECK_FALSE(context.parser.error_retryable());
  CHECK(context.parser.error_message() ==
        "context_length_exceeded: Your input exceeds the context window of this model.");
  auto quota = run({R"({"type":"response.failed","response":{"error":{"code":"insufficient_quota","message":"You exceeded your current quota."}}})"});
  CHECK_FALSE(quota.parser.error_retryable());
  CHECK(quota.parser.error_message() == "You exceeded your current quota.");
  auto limited = run({R"({"type":"response.failed","response":{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 1.5s."}}})"});
  CHECK(limited.parser.error_retryable());
  CHECK(limited.parser.retry_after_ms() == std::optional<int64_t>(1500));
  CHECK(limited.parser.error_message() ==
        "stream disconnected before completion: Rate limit reached. Please try again in 1.5s.");
  auto bare = run({R"({"type":"response.failed","response":{"id":"r"}})"});
  CHECK(bare.parser.error_retryable());
  CHECK(bare.parser.error_message() == "stream disconnected before completion: response.failed event received");
  auto error_event = run({R"({"type":"error","code":"server_error","message":"The server had an error"})"});
  CHECK(error_event.status == ResponsesStreamParser::Status::error);
  CHECK(error_event.parser.error_retryable());
}

TEST_CASE("responses stream: the end of the stream before response.completed is a cut stream") {
  auto r = run({R"({"type":"response.output_text.delta","delta":"Hi"})", "not json", R"([1,2])"});
  CHECK(r.status == ResponsesStreamParser::Status::error);
  CHECK(r.parser.error_retryable());
  CHECK(r.parser.error_message() == "stream disconnected before completion: stream closed before response.completed");
}

TEST_CASE("responses stream: try-again delays in every unit") {
  CHECK(try_again_delay_ms("Please try again in 20ms.") == std::optional<int64_t>(20));
  CHECK(try_again_delay_ms("try again in 3 seconds") == std::optional<int64_t>(3000));
  CHECK(try_again_delay_ms("Try Again In 2s") == std::optional<int64_t>(2000));
  CHECK_FALSE(try_again_delay_ms("try later"));
  // However long the number, the wait is capped like a Retry-After header's.
  CHECK(try_again_delay_ms("try again in 0999999999999999999999920ms") == std::optional<int64_t>(retry::kMaxRetryAfterMs));
  CHECK(try_again_delay_ms("try again in " + std::string(400, '9') + " s") == std::optional<int64_t>(retry::kMaxRetryAfterMs));
}

TEST_CASE("responses stream through the reader: SSE with event lines, split at every byte") {
  std::string bytes;
  for (const auto& d : {std::string(R"({"type":"response.output_text.delta","delta":"Hel"})"),
                        std::string(R"({"type":"response.output_text.delta","delta":"lo"})"),
                        std::string(R"({"type":"response.output_item.done","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}})"),
                        kCompleted}) {
    auto type = d.substr(9, d.find('"', 9) - 9);
    bytes += "event: " + type + "\ndata: " + d + "\n\n";
  }
  for (size_t i = 0; i <= bytes.size(); ++i) {
    ModelStreamReader reader(1, "c", WireApi::responses);
    std::vector<ModelEvent> out;
    reader.on_head(200, {}, out);
    reader.on_body(bytes.substr(0, i), out);
    reader.on_body(bytes.substr(i), out);
    reader.on_end("", out);
    REQUIRE(reader.outcome().kind == StreamOutcome::completed);
    REQUIRE(out.size() == 4);
  }
  ModelStreamReader failed(1, "c", WireApi::responses);
  std::vector<ModelEvent> out;
  failed.on_head(200, {}, out);
  failed.on_body("data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"try again in 2s\"}}}\n\n", out);
  CHECK(failed.outcome().kind == StreamOutcome::stream_error);
  REQUIRE(failed.outcome().retry_after_ms);
  CHECK(*failed.outcome().retry_after_ms == 2000);
}

TEST_CASE("responses stream: fields of an unexpected type are ignored, never thrown out of the parser") {
  auto r = run({R"({"type":"response.output_text.delta","delta":5})",
                R"({"type":"response.output_item.done","item":{"type":"message","role":7,"content":[{"type":"output_text","text":null}]}})",
                R"({"type":"response.output_item.done","item":{"type":"function_call","name":["x"],"call_id":1,"arguments":{}}})",
                R"({"type":7})",
                R"({"type":"response.failed","response":{"error":{"code":500,"message":{"text":"odd"}}}})"});
  CHECK(r.status == ResponsesStreamParser::Status::error);
  CHECK(r.parser.error_retryable());
  auto through_reader = [] {
    ModelStreamReader reader(1, "c", WireApi::responses);
    std::vector<ModelEvent> out;
    reader.on_head(200, {}, out);
    reader.on_body("data: {\"type\":\"response.output_text.delta\",\"delta\":[1]}\n\n", out);
    reader.on_body("data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":\"many\"}}}\n\n", out);
    return reader.outcome().kind;
  };
  CHECK(through_reader() == StreamOutcome::completed);
}

TEST_CASE("responses request: a tool output with images goes as input_text/input_image parts, Chat sends its text") {
  Prompt p = responses_prompt();
  p.input = {user_message("look"), FunctionCallItem{"mcp__img__shot", "{}", "c9"},
             FunctionCallOutputItem{"c9", R"([{"type":"text","text":"a dot"},{"type":"image"}])",
                                    std::vector<ContentItem>{InputText{"a dot"}, InputImage{"data:image/png;base64,AAAA"}}}};
  ModelProviderInfo provider;
  auto body = build_responses_request(p, provider);
  CHECK(body.find(R"({"type":"function_call_output","call_id":"c9","output":[{"type":"input_text","text":"a dot"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]})") !=
        std::string::npos);
  auto chat = build_chat_request(p, provider);
  CHECK(chat.find(R"("content":"[{\"type\":\"text\",\"text\":\"a dot\"},{\"type\":\"image\"}]")") != std::string::npos);
}
