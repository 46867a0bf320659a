// Golden Chat Completions request bodies per dialect (issue 6): one assistant message per
// response (its text and all its tool calls, strict providers reject anything else), reasoning
// passed back the way each provider needs it (DeepSeek reasoning_content, Claude's signed
// thinking_blocks, the reference's `reasoning` anchors, nothing for the rest), with and without
// cache markers, tools and history repair.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/model/chat_request.hpp"
#include "protocol/base/json_reader.hpp"

using namespace llmx;

namespace {

const std::string kSystem = R"({"role":"system","content":"You are llmx."})";
const std::string kSystemMarked = R"({"role":"system","content":"You are llmx.","cache_control":{"type":"ephemeral"}})";
const std::string kTail = R"(],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})";

Prompt dialect_prompt(std::string model, std::vector<ResponseItem> input) {
  Prompt p;
  p.model = std::move(model);
  p.instructions = "You are llmx.";
  p.input = std::move(input);
  return p;
}

ResponseItem reasoning(std::string text, std::optional<std::string> encrypted = std::nullopt) {
  ReasoningItem r;
  r.content = std::vector<ReasoningContent>{ReasoningText{std::move(text)}};
  if (encrypted) r.encrypted_content = *encrypted;
  return r;
}

const FunctionCallItem kLsItem{"shell", R"({"command":["ls"]})", "c1"};
const FunctionCallItem kPwdItem{"shell", R"({"command":["pwd"]})", "c2"};
const std::string kLsCall = R"({"id":"c1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}})";
const std::string kPwdCall = R"({"id":"c2","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"pwd\"]}"}})";

std::string body(const std::string& model, const std::vector<ResponseItem>& input, ModelProviderInfo provider = {}) {
  auto b = build_chat_request(dialect_prompt(model, input), provider);
  json::Parser p;
  p.parse(b);  // always valid JSON
  return b;
}

// One response of a tool-using turn: reasoning, text, two parallel calls, their outputs, answer.
std::vector<ResponseItem> tool_turn(std::optional<std::string> signature = std::nullopt) {
  return {user_message("look around"),
          reasoning("I should list.", signature),
          assistant_message("Checking."),
          kLsItem,
          kPwdItem,
          FunctionCallOutputItem{"c1", "a.txt"},
          FunctionCallOutputItem{"c2", "/w"},
          reasoning("Done looking."),
          assistant_message("Two things.")};
}

}  // namespace

TEST_CASE("chat request dialects: OpenAI gets one assistant message with text and both calls") {
  CHECK(body("gpt-4o", tool_turn()) ==
        R"({"model":"gpt-4o","messages":[)" + kSystem + R"(,{"role":"user","content":"look around"},)"
        R"({"role":"assistant","content":"Checking.","tool_calls":[)" + kLsCall + "," + kPwdCall + R"(]},)"
        R"({"role":"tool","tool_call_id":"c1","content":"a.txt"},{"role":"tool","tool_call_id":"c2","content":"/w"},)"
        R"({"role":"assistant","content":"Two things."})" + kTail);
}

TEST_CASE("chat request dialects: DeepSeek gets reasoning_content on every assistant message of a tool-calling turn") {
  auto turn = tool_turn();
  turn.push_back(user_message("thanks"));
  turn.push_back(reasoning("No tools needed."));
  turn.push_back(assistant_message("You're welcome."));
  auto b = body("deepseek-reasoner", turn);
  CHECK(b == R"({"model":"deepseek-reasoner","messages":[)" + kSystem + R"(,{"role":"user","content":"look around"},)"
             R"({"role":"assistant","content":"Checking.","tool_calls":[)" + kLsCall + "," + kPwdCall +
             R"(],"reasoning_content":"I should list."},)"
             R"({"role":"tool","tool_call_id":"c1","content":"a.txt"},{"role":"tool","tool_call_id":"c2","content":"/w"},)"
             R"({"role":"assistant","content":"Two things.","reasoning_content":"Done looking."},)"
             R"({"role":"user","content":"thanks"},{"role":"assistant","content":"You're welcome."})" + kTail);
  // A tool-calling message without recorded reasoning still carries the field (empty).
  auto plain = body("deepseek-chat", {user_message("go"), kLsItem, FunctionCallOutputItem{"c1", "x"}});
  CHECK(plain.find(R"(]},"reasoning_content":"")") == std::string::npos);
  CHECK(plain.find(R"("tool_calls":[)" + kLsCall + R"(],"reasoning_content":""})") != std::string::npos);
  // A provider can turn it off.
  ModelProviderInfo off;
  off.reasoning_passback = ReasoningPassback::none;
  CHECK(body("deepseek-reasoner", tool_turn(), off).find("reasoning_content") == std::string::npos);
}

TEST_CASE("chat request dialects: Claude gets signed thinking blocks and cache markers") {
  const std::string blocks = R"([{"type":"thinking","thinking":"I should list.","signature":"EqoB"}])";
  auto b = body("anthropic/claude-sonnet-4", tool_turn(blocks));
  // 6 messages with the system one: the history marker sits on index len-4 = 2 (the assistant turn).
  CHECK(b == R"({"model":"anthropic/claude-sonnet-4","messages":[)" + kSystemMarked +
             R"(,{"role":"user","content":"look around"},)"
             R"({"role":"assistant","content":"Checking.","tool_calls":[)" + kLsCall + "," + kPwdCall +
             R"(],"thinking_blocks":)" + blocks + R"(,"cache_control":{"type":"ephemeral"}},)"
             R"({"role":"tool","tool_call_id":"c1","content":"a.txt"},{"role":"tool","tool_call_id":"c2","content":"/w"},)"
             R"({"role":"assistant","content":"Two things."})" + kTail);
  // Unsigned reasoning is never sent back (Anthropic rejects a thinking block without signature).
  CHECK(body("claude-3-7-sonnet", tool_turn()).find("thinking_blocks") == std::string::npos);
}

TEST_CASE("chat request dialects: the reference's `reasoning` anchors, only after the last user message") {
  ModelProviderInfo anchors;
  anchors.reasoning_passback = ReasoningPassback::reasoning;
  auto b = body("openrouter/some-model", tool_turn(), anchors);
  CHECK(b.find(R"("tool_calls":[)" + kLsCall + "," + kPwdCall + R"(],"reasoning":"I should list."})") != std::string::npos);
  CHECK(b.find(R"({"role":"assistant","content":"Two things.","reasoning":"Done looking."})") != std::string::npos);
  // A new user message at the end: nothing is attached anywhere.
  auto turn = tool_turn();
  turn.push_back(user_message("and now?"));
  CHECK(body("openrouter/some-model", turn, anchors).find("\"reasoning\"") == std::string::npos);
}

TEST_CASE("chat request dialects: Gemini / vLLM style ids and repaired history stay valid") {
  // A parallel pair where one output went missing and an orphan output of another call.
  auto b = body("gemini/gemini-2.5-pro",
                {user_message("go"), kLsItem, kPwdItem, FunctionCallOutputItem{"c1", "a"}, FunctionCallOutputItem{"zz", "orphan"},
                 user_message("next")});
  CHECK(b == R"({"model":"gemini/gemini-2.5-pro","messages":[)" + kSystem + R"(,{"role":"user","content":"go"},)"
             R"({"role":"assistant","content":null,"tool_calls":[)" + kLsCall + "," + kPwdCall + R"(]},)"
             R"({"role":"tool","tool_call_id":"c1","content":"a"},{"role":"tool","tool_call_id":"c2","content":"aborted"},)"
             R"({"role":"user","content":"next"})" + kTail);
}

TEST_CASE("chat request dialects: responses separated by tool results are separate assistant messages") {
  auto b = body("gpt-4o", {user_message("go"), kLsItem, FunctionCallOutputItem{"c1", "a"}, kPwdItem,
                           FunctionCallOutputItem{"c2", "b"}});
  CHECK(b.find(R"({"role":"assistant","content":null,"tool_calls":[)" + kLsCall + R"(]},{"role":"tool")") !=
        std::string::npos);
  CHECK(b.find(R"({"role":"assistant","content":null,"tool_calls":[)" + kPwdCall + R"(]},{"role":"tool")") !=
        std::string::npos);
  // Reasoning between two calls of one response (interleaved thinking) keeps them together, so
  // every call is still followed by its result.
  auto interleaved = body("gpt-4o", {user_message("go"), kLsItem, reasoning("then pwd"), kPwdItem,
                                     FunctionCallOutputItem{"c1", "a"}, FunctionCallOutputItem{"c2", "b"}});
  CHECK(interleaved.find(R"("tool_calls":[)" + kLsCall + "," + kPwdCall + R"(]},{"role":"tool")") != std::string::npos);
}
