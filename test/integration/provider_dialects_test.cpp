// Every provider dialect of mock-llm end to end through `llmx exec --core-events` (issue 6): the text,
// shell and apply_patch scenarios as OpenAI, Claude and Gemini behind LiteLLM, DeepSeek, vLLM /
// Ollama and Azure stream them; reasoning passed back the way DeepSeek and Claude need it; and
// the Responses wire (wire_api = "responses") running the same scenarios.
#include <doctest/doctest.h>

#include <filesystem>

#include "test/support/harness.hpp"

using namespace llmx::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kDialects = {"openai", "anthropic", "gemini", "deepseek", "vllm", "azure"};

struct Workspace {
  TempDir home{"llmx-dialect-home"};
  TempDir ws{"llmx-dialect-ws"};
  MockLlm mock;

  // `llmx exec --core-events -s workspace-write <flags> -- <prompt>` in the workspace; its events.
  std::vector<Message> exec(const std::string& prompt, std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), {"-s", "workspace-write"});
    auto r = run_exec_json(flags, prompt, llmx_env(home.path(), mock.url()), kDefaultTimeout, ws.path());
    INFO("prompt: " << prompt);
    REQUIRE(r.problem() == "");
    return r.events;
  }
};


std::string last_message(const std::vector<Message>& events) {
  return events.back().str_or("/msg/last_agent_message", "");
}

// The assistant message of request `index` that carries tool calls, as JSON text.
std::string tool_calling_message(const Message& requests, int index) {
  for (int i = 0;; ++i) {
    auto base = "/requests/" + std::to_string(index) + "/messages/" + std::to_string(i);
    if (!requests.has(base)) return "";
    if (requests.has(base + "/tool_calls")) return requests.text(base);
  }
}

}  // namespace

TEST_CASE("dialects: text, shell and apply_patch run end to end in every provider's dialect") {
  for (const auto& dialect : kDialects) {
    CAPTURE(dialect);
    Workspace w;
    auto text = w.exec("@mock:text dialect=" + dialect);
    CHECK(last_message(text) == kMockAnswer);
    // Usage reaches token_count in every dialect (they send it their own way).
    auto counts = events_of_type(text, "token_count");
    bool usage = false;
    for (const auto& c : counts) usage |= c.has("/msg/info/last_token_usage/input_tokens");
    CHECK(usage);

    auto shell = w.exec("@mock:shell dialect=" + dialect + " cmd=echo dialect-" + dialect);
    auto ends = events_of_type(shell, "exec_command_end");
    REQUIRE(ends.size() == 1);
    CHECK(ends[0].integer("/msg/exit_code") == 0);
    CHECK(contains(ends[0].str("/msg/aggregated_output"), "dialect-" + dialect));
    CHECK(contains(last_message(shell), "The command printed: Exit code: 0"));

    auto patch = w.exec("@mock:apply_patch dialect=" + dialect + " file=" + dialect + ".txt");
    CHECK(events_of_type(patch, "patch_apply_end").size() == 1);
    CHECK(read_file(w.ws.file(dialect + ".txt")) == "hello from mock-llm\n");
    CHECK(contains(last_message(patch), "Patch result:"));

    // The follow-up requests answered each call with exactly one tool message for its id (ids
    // the provider never sent were synthesised and kept).
    auto requests = recorded_requests(w.mock);
    for (int follow_up : {2, 4}) {
      auto call = tool_calling_message(requests, follow_up);
      INFO(call);
      REQUIRE_FALSE(call.empty());
      Message m(call);
      auto id = m.str("/tool_calls/0/id");
      CHECK_FALSE(id.empty());
      auto tools = tool_messages(requests, follow_up);
      CHECK(tools.size() == 1);
    }
  }
}

TEST_CASE("dialects: DeepSeek's reasoning goes back as reasoning_content on the tool-calling message") {
  Workspace w;
  auto events = w.exec("@mock:shell dialect=deepseek think=pondering cmd=echo ok", {"-c", "model=\"deepseek-reasoner\""});
  CHECK(events_of_type(events, "agent_reasoning").size() >= 1);
  auto requests = recorded_requests(w.mock);
  Message call(tool_calling_message(requests, 1));
  CHECK(call.str("/reasoning_content") == "pondering done.");
  CHECK_FALSE(call.has("/thinking_blocks"));
}

TEST_CASE("dialects: Claude's signed thinking goes back as thinking_blocks, with cache markers") {
  Workspace w;
  w.exec("@mock:shell dialect=anthropic think=hmm cmd=echo ok", {"-c", "model=\"anthropic/claude-sonnet-4\""});
  auto requests = recorded_requests(w.mock);
  Message call(tool_calling_message(requests, 1));
  INFO(call.line());
  CHECK(call.str("/thinking_blocks/0/type") == "thinking");
  CHECK(call.str("/thinking_blocks/0/thinking") == "hmm done.");
  CHECK(call.str("/thinking_blocks/0/signature").starts_with("EqoB"));
  CHECK_FALSE(call.has("/reasoning_content"));
  CHECK(requests.has("/requests/1/messages/0/cache_control"));
  // A model that is neither gets no reasoning back.
  Workspace plain;
  plain.exec("@mock:shell dialect=openai think=hmm cmd=echo ok", {"-c", "model=\"gpt-4o\""});
  Message openai_call(tool_calling_message(recorded_requests(plain.mock), 1));
  CHECK_FALSE(openai_call.has("/reasoning_content"));
  CHECK_FALSE(openai_call.has("/thinking_blocks"));
}

TEST_CASE("dialects: cached prompt tokens from Anthropic and DeepSeek usage reach token_count") {
  for (const std::string dialect : {"anthropic", "deepseek"}) {
    CAPTURE(dialect);
    Workspace w;
    auto events = w.exec("@mock:text prompt_tokens=400 dialect=" + dialect);
    auto counts = events_of_type(events, "token_count");
    REQUIRE_FALSE(counts.empty());
    CHECK(counts.back().integer("/msg/info/last_token_usage/cached_input_tokens") > 0);
  }
}

TEST_CASE("responses wire: text, shell and apply_patch end to end, reasoning replayed encrypted") {
  Workspace w;
  const std::vector<std::string> wire = {"-c", "model_providers.litellm.wire_api=\"responses\"", "-c",
                                         "model=\"gpt-5\""};
  auto text = w.exec("@mock:text ratelimit=openai ratelimit_remaining=30", wire);
  CHECK(last_message(text) == kMockAnswer);
  // Rate-limit headers are read on this wire too.
  bool limits = false;
  for (const auto& c : events_of_type(text, "token_count"))
    limits |= c.has("/msg/rate_limits/primary/used_percent") && c.text("/msg/rate_limits/primary/used_percent") == "70.0";
  CHECK(limits);
  auto shell = w.exec("@mock:shell think=considering cmd=echo via-responses", wire);
  CHECK(contains(last_message(shell), "The command printed: Exit code: 0"));
  CHECK(contains(events_of_type(shell, "exec_command_end").at(0).str("/msg/aggregated_output"), "via-responses"));
  CHECK(events_of_type(shell, "agent_reasoning").size() >= 1);
  auto patch = w.exec("@mock:apply_patch file=responses.txt", wire);
  CHECK(read_file(w.ws.file("responses.txt")) == "hello from mock-llm\n");

  auto requests = recorded_requests(w.mock);
  // The follow-up of the shell call: Responses input items, the reasoning with its encrypted
  // content, the call and its output; the conversation as the cache key.
  auto follow_up = requests.text("/requests/2");
  INFO(follow_up);
  Message body(follow_up);
  CHECK(body.has("/input"));
  CHECK_FALSE(body.has("/messages"));
  CHECK(body.str("/prompt_cache_key") == shell.front().str("/msg/session_id"));
  CHECK(contains(follow_up, R"("type":"reasoning")"));
  CHECK(contains(follow_up, R"("encrypted_content":"gAAAA)"));
  CHECK(contains(follow_up, R"("type":"function_call_output")"));
  CHECK(body.str("/tool_choice") == "auto");
}
