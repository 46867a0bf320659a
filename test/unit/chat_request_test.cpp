// Unit tests for Chat Completions request bodies (engine.md §2.3, DECISIONS E4, E6): exact
// golden bodies, prompt-cache marker placement, and history repair.
#include "protocol/model/chat_request.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"

using namespace llmx;

namespace {

const std::string kMark = R"("cache_control":{"type":"ephemeral"})";

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

ToolSpec shell_tool() {
  return ToolSpec{"shell", "Runs a shell command.",
                  RawJson{R"({"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]})"}};
}
ToolSpec plan_tool() { return ToolSpec{"update_plan", "Updates the plan.", RawJson{R"({"type":"object","properties":{}})"}}; }

const std::string kShellJson =
    R"({"type":"function","function":{"name":"shell","description":"Runs a shell command.","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}})";
const std::string kPlanFn =
    R"("function":{"name":"update_plan","description":"Updates the plan.","parameters":{"type":"object","properties":{}}})";

Prompt prompt(std::string model, std::vector<ResponseItem> input, std::vector<ToolSpec> tools = {}) {
  Prompt p;
  p.model = std::move(model);
  p.instructions = "You are llmx.";
  p.input = std::move(input);
  p.tools = std::move(tools);
  return p;
}

std::string history_json(const std::vector<ResponseItem>& items) { return json::to_json(items); }
std::string history_json(const NormalizedHistory& h) {
  std::vector<ResponseItem> items;
  for (const ResponseItem* i : h.items()) items.push_back(*i);
  return history_json(items);
}

}  // namespace

TEST_CASE("chat request: text-only prompt for a non-claude model") {
  ModelProviderInfo provider;
  auto body = build_chat_request(prompt("openai/gpt-4o", {user_message("hello")}), provider);
  CHECK(body ==
        R"({"model":"openai/gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":"hello"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
  CHECK(body.find("cache_control") == std::string::npos);
  CHECK(body.find("\"tools\"") == std::string::npos);
  // The body is valid JSON.
  json::Parser p;
  CHECK_NOTHROW(p.parse(body));
}

TEST_CASE("chat request: the provider's max_tokens is sent") {
  ModelProviderInfo provider;
  provider.max_tokens = 4096;
  CHECK(build_chat_request(prompt("gpt-4o", {user_message("hi")}), provider) ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":4096})");
}

TEST_CASE("chat request: include_usage = false drops stream_options (E4)") {
  ModelProviderInfo provider;
  provider.include_usage = false;
  CHECK(build_chat_request(prompt("gpt-4o", {user_message("hi")}), provider) ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":"hi"}],"stream":true,"max_tokens":20480})");
}

TEST_CASE("chat request: a non-claude model with tools gets no markers") {
  ModelProviderInfo provider;
  auto body = build_chat_request(prompt("deepseek-chat", {user_message("hi")}, {shell_tool(), plan_tool()}), provider);
  CHECK(body ==
        R"({"model":"deepseek-chat","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"tools":[)" +
            kShellJson + R"(,{"type":"function",)" + kPlanFn + R"(}],"max_tokens":20480})");
}

TEST_CASE("chat request: claude with tools and more than 4 messages (engine.md §2.3.2)") {
  ModelProviderInfo provider;
  auto body = build_chat_request(
      prompt("anthropic/claude-sonnet-4-20250514",
             {user_message("u1"), assistant_message("a1"), user_message("u2"), assistant_message("a2"),
              user_message("u3")},
             {shell_tool(), plan_tool()}),
      provider);
  // 6 messages (system included): the one at index 6 - 4 = 2 is marked.
  CHECK(body ==
        std::string(R"({"model":"anthropic/claude-sonnet-4-20250514","messages":[)") +
            R"({"role":"system","content":"You are llmx.",)" + kMark + "}," +
            R"({"role":"user","content":"u1"},)" +
            R"({"role":"assistant","content":"a1",)" + kMark + "}," +
            R"({"role":"user","content":"u2"},)" +
            R"({"role":"assistant","content":"a2"},)" +
            R"({"role":"user","content":"u3"}],)" +
            R"("stream":true,"stream_options":{"include_usage":true},"tools":[)" + kShellJson +
            R"(,{"type":"function",)" + kPlanFn + "," + kMark + R"(}],"max_tokens":20480})");
  CHECK(count(body, kMark) == 3);
}

TEST_CASE("chat request: the history marker moves with the length and needs more than 4 messages") {
  ModelProviderInfo provider;
  std::vector<ResponseItem> history;
  // 1 to 3 history messages: 2..4 in all, no history marker (only the system one).
  for (int n = 1; n <= 3; ++n) {
    history.push_back(user_message("m" + std::to_string(n)));
    CAPTURE(n);
    auto body = build_chat_request(prompt("claude-3-5-haiku", history), provider);
    CHECK(count(body, kMark) == 1);
  }
  // 4 history messages: 5 in all -> index 1 ("m1") is marked.
  history.push_back(user_message("m4"));
  auto body = build_chat_request(prompt("claude-3-5-haiku", history), provider);
  CHECK(count(body, kMark) == 2);
  CHECK(body.find(R"({"role":"user","content":"m1",)" + kMark + "}") != std::string::npos);
  // 7 history messages: 8 in all -> index 4 ("m4").
  for (int n = 5; n <= 7; ++n) history.push_back(user_message("m" + std::to_string(n)));
  body = build_chat_request(prompt("claude-3-5-haiku", history), provider);
  CHECK(count(body, kMark) == 2);
  CHECK(body.find(R"({"role":"user","content":"m4",)" + kMark + "}") != std::string::npos);
}

TEST_CASE("chat request: the history marker counts the messages actually sent") {
  ModelProviderInfo provider;
  // Skipped items (blank, system role, reasoning) do not count toward len - 4.
  std::vector<ResponseItem> history = {
      user_message("m1"), user_message("   "), MessageItem{"system", {InputText{"ignored"}}},
      ReasoningItem{{}, std::vector<ReasoningContent>{ReasoningText{"thinking"}}, {}},
      user_message("m2"), user_message("m3"), user_message("m4")};
  auto body = build_chat_request(prompt("claude-opus-4", history), provider);
  CHECK(body ==
        std::string(R"({"model":"claude-opus-4","messages":[{"role":"system","content":"You are llmx.",)") + kMark +
            R"(},{"role":"user","content":"m1",)" + kMark +
            R"(},{"role":"user","content":"m2"},{"role":"user","content":"m3"},{"role":"user","content":"m4"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
}

TEST_CASE("chat request: provider prompt_cache overrides the model-name rule (E6)") {
  std::vector<ResponseItem> history = {user_message("a"), user_message("b"), user_message("c"), user_message("d")};
  SUBCASE("false disables markers for claude") {
    ModelProviderInfo provider;
    provider.prompt_cache = false;
    auto body = build_chat_request(prompt("anthropic/claude-sonnet-4", history, {shell_tool()}), provider);
    CHECK(body.find("cache_control") == std::string::npos);
    CHECK_FALSE(wants_prompt_cache("anthropic/claude-sonnet-4", provider));
  }
  SUBCASE("true enables markers for other models") {
    ModelProviderInfo provider;
    provider.prompt_cache = true;
    auto body = build_chat_request(prompt("gpt-4o", history, {shell_tool()}), provider);
    CHECK(count(body, kMark) == 3);  // system, message len-4, last tool
    CHECK(body.find(R"({"role":"system","content":"You are llmx.",)" + kMark + "}") != std::string::npos);
    CHECK(body.find(R"({"role":"user","content":"a",)" + kMark + "}") != std::string::npos);
    CHECK(body.find(kShellJson.substr(0, kShellJson.size() - 1) + "," + kMark + "}") != std::string::npos);
    CHECK(wants_prompt_cache("gpt-4o", provider));
  }
  SUBCASE("unset: the model name decides, case-insensitively") {
    ModelProviderInfo provider;
    CHECK(wants_prompt_cache("claude-3-7-sonnet", provider));
    CHECK(wants_prompt_cache("bedrock/anthropic.Claude-v2", provider));
    CHECK(wants_prompt_cache("CLAUDE", provider));
    CHECK_FALSE(wants_prompt_cache("gpt-4o", provider));
    CHECK_FALSE(wants_prompt_cache("anthropic/sonnet", provider));  // no "claude" in the name
    CHECK_FALSE(wants_prompt_cache("", provider));
  }
}

TEST_CASE("chat request: parallel_tool_calls is sent only when asked and only with tools") {
  ModelProviderInfo provider;
  auto p = prompt("gpt-4o", {user_message("hi")}, {shell_tool()});
  CHECK(build_chat_request(p, provider).find("parallel_tool_calls") == std::string::npos);
  p.parallel_tool_calls = true;
  auto body = build_chat_request(p, provider);
  CHECK(body.find(R"(],"parallel_tool_calls":true,"max_tokens":20480})") != std::string::npos);
  p.tools.clear();
  CHECK(build_chat_request(p, provider).find("parallel_tool_calls") == std::string::npos);
}

TEST_CASE("chat request: a tool call and its output become assistant tool_calls and a tool message") {
  ModelProviderInfo provider;
  auto body = build_chat_request(
      prompt("gpt-4o", {user_message("run ls"), FunctionCallItem{"shell", R"({"command":["ls"]})", "c1"},
                        FunctionCallOutputItem{"c1", "a.txt\n"}, assistant_message("done")}),
      provider);
  CHECK(body ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":"run ls"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]},{"role":"tool","tool_call_id":"c1","content":"a.txt\n"},{"role":"assistant","content":"done"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
}

TEST_CASE("chat request: a call without output gets an aborted tool message right after it") {
  ModelProviderInfo provider;
  auto body = build_chat_request(
      prompt("gpt-4o", {user_message("go"), FunctionCallItem{"shell", R"({"command":["sleep","9"]})", "c1"},
                        user_message("never mind")}),
      provider);
  CHECK(body ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"sleep\",\"9\"]}"}}]},{"role":"tool","tool_call_id":"c1","content":"aborted"},{"role":"user","content":"never mind"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
}

TEST_CASE("history repair: missing outputs are synthesised, orphans and bad calls dropped") {
  SUBCASE("a call at the very end gets an aborted output") {
    History in{user_message("go"), FunctionCallItem{"shell", "{}", "c1"}};
    auto out = normalize_history(in);
    CHECK(history_json(out) == history_json({user_message("go"), FunctionCallItem{"shell", "{}", "c1"},
                                             FunctionCallOutputItem{"c1", "aborted"}}));
  }
  SUBCASE("a call followed by an assistant message gets its output before that message") {
    History in{FunctionCallItem{"shell", "{}", "c1"}, assistant_message("hm")};
    auto out = normalize_history(in);
    CHECK(history_json(out) == history_json({FunctionCallItem{"shell", "{}", "c1"},
                                             FunctionCallOutputItem{"c1", "aborted"}, assistant_message("hm")}));
  }
  SUBCASE("an output without a call is dropped") {
    History in{user_message("hi"), FunctionCallOutputItem{"ghost", "boo"}, assistant_message("a")};
    auto out = normalize_history(in);
    CHECK(history_json(out) == history_json({user_message("hi"), assistant_message("a")}));
  }
  SUBCASE("an output before its call is dropped (and the call answered as aborted)") {
    History in{FunctionCallOutputItem{"c1", "early"}, FunctionCallItem{"f", "{}", "c1"}};
    auto out = normalize_history(in);
    CHECK(history_json(out) ==
          history_json({FunctionCallItem{"f", "{}", "c1"}, FunctionCallOutputItem{"c1", "aborted"}}));
  }
  SUBCASE("a call with invalid JSON arguments is sent with {} and keeps its error output") {
    History in{user_message("go"), FunctionCallItem{"shell", "{\"command\":[\"ls\"", "c1"},
               FunctionCallOutputItem{"c1", "failed to parse"}, assistant_message("sorry")};
    auto out = normalize_history(in);
    CHECK(history_json(out) == history_json({user_message("go"), FunctionCallItem{"shell", "{}", "c1"},
                                             FunctionCallOutputItem{"c1", "failed to parse"}, assistant_message("sorry")}));
  }
  SUBCASE("a later call reusing the id keeps its own output") {
    History in{FunctionCallItem{"f", "{bad", "c1"}, FunctionCallOutputItem{"c1", "x"},
               FunctionCallItem{"f", "{}", "c1"}, FunctionCallOutputItem{"c1", "y"}};
    auto out = normalize_history(in);
    CHECK(history_json(out) == history_json({FunctionCallItem{"f", "{}", "c1"}, FunctionCallOutputItem{"c1", "x"},
                                             FunctionCallItem{"f", "{}", "c1"}, FunctionCallOutputItem{"c1", "y"}}));
  }
  SUBCASE("a duplicate output is dropped") {
    History in{FunctionCallItem{"f", "{}", "c1"}, FunctionCallOutputItem{"c1", "1"},
               FunctionCallOutputItem{"c1", "2"}};
    auto out = normalize_history(in);
    CHECK(history_json(out) == history_json({FunctionCallItem{"f", "{}", "c1"}, FunctionCallOutputItem{"c1", "1"}}));
  }
  SUBCASE("parallel calls: each gets exactly one output, all before the next message") {
    History in{FunctionCallItem{"f", "{}", "a"}, FunctionCallItem{"g", "{}", "b"},
               FunctionCallOutputItem{"b", "B"}, user_message("next")};
    auto out = normalize_history(in);
    REQUIRE(out.size() == 5);
    CHECK(history_json({out[0], out[1]}) ==
          history_json({FunctionCallItem{"f", "{}", "a"}, FunctionCallItem{"g", "{}", "b"}}));
    int a = 0, b = 0;
    for (size_t i = 2; i < 4; ++i) {
      auto* o = out[i].get_if<FunctionCallOutputItem>();
      REQUIRE(o);
      if (o->call_id == "a") {
        ++a;
        CHECK(o->output == "aborted");
      }
      if (o->call_id == "b") {
        ++b;
        CHECK(o->output == "B");
      }
    }
    CHECK(a == 1);
    CHECK(b == 1);
    CHECK(history_json({out[4]}) == history_json({user_message("next")}));
  }
  SUBCASE("a valid history is unchanged") {
    std::vector<ResponseItem> in = {user_message("u"), FunctionCallItem{"f", R"({"a":[1,2]})", "c1"},
                                    FunctionCallOutputItem{"c1", "ok"}, assistant_message("done")};
    History kept(in);
    auto out = normalize_history(kept);
    CHECK(history_json(out) == history_json(in));
    // Not a copy: the very items the history holds.
    size_t i = 0;
    for (const auto& item : kept) CHECK(&out[i++] == &item);
  }
  SUBCASE("the next request on the thread reuses the pointer buffer, and a moved result gives its back once") {
    History in{user_message("u"), assistant_message("a")};
    const void* first = nullptr;
    {
      auto out = normalize_history(in);
      auto moved = std::move(out);  // the moved-from result has nothing to give back
      first = moved.items().data();
    }
    auto again = normalize_history(in);
    CHECK(again.items().data() == first);
    CHECK(again.size() == 2);
  }
}

TEST_CASE("chat request: images produce content arrays, blank text parts are left out") {
  ModelProviderInfo provider;
  MessageItem m{"user", {InputText{"what is this?"}, InputImage{"data:image/png;base64,iVBORw0KGgo="}, InputText{"  \n"},
                         InputText{"and this"}, InputImage{"https://example.com/b.jpg"}}};
  auto body = build_chat_request(prompt("gpt-4o", {m}), provider);
  CHECK(body ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"text","text":"and this"},{"type":"image_url","image_url":{"url":"https://example.com/b.jpg"}}]}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
}

TEST_CASE("chat request: an image-only message is sent, text parts are joined without separator") {
  ModelProviderInfo provider;
  MessageItem img{"user", {InputImage{"data:image/gif;base64,R0lG"}}};
  MessageItem parts{"developer", {InputText{"a"}, InputText{"b"}}};
  auto body = build_chat_request(prompt("gpt-4o", {img, parts}), provider);
  CHECK(body ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are llmx."},{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lG"}}]},{"role":"developer","content":"ab"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
}

TEST_CASE("chat request: strings are escaped in the body") {
  ModelProviderInfo provider;
  Prompt p = prompt("gpt-4o", {user_message("line1\nquote\" tab\t")});
  p.instructions = "sys \"x\"\n";
  CHECK(build_chat_request(p, provider) ==
        R"({"model":"gpt-4o","messages":[{"role":"system","content":"sys \"x\"\n"},{"role":"user","content":"line1\nquote\" tab\t"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":20480})");
}
