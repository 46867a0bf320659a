// Compaction as plain code: the request, the provider-says-too-big trimming, the summary and
// the auto-compaction threshold (engine.md §1.12, DECISIONS E14).
#include <doctest/doctest.h>

#include "protocol/model/retry_policy.hpp"

#include "actors/compaction.hpp"

using namespace llmx;

namespace {
ResponseItem msg(std::string role, std::string text) {
  MessageItem m;
  m.role = role;
  if (role == "assistant")
    m.content.push_back(ContentItem{OutputText{std::move(text)}});
  else
    m.content.push_back(ContentItem{InputText{std::move(text)}});
  return ResponseItem{std::move(m)};
}
ResponseItem call(std::string id) { return ResponseItem{FunctionCallItem{"shell", "{}", std::move(id)}}; }
ResponseItem output(std::string id) { return ResponseItem{FunctionCallOutputItem{std::move(id), "ok"}}; }
}  // namespace

TEST_CASE("compaction: the prompt is ours unless compact_prompt says otherwise (trimmed, empty = unset)") {
  Config cfg;
  auto ours = compaction::prompt(cfg);
  CHECK(ours.find("handoff") != std::string::npos);
  cfg.compact_prompt = "  Summarise.\n";
  CHECK(compaction::prompt(cfg) == "Summarise.");
  cfg.compact_prompt = "   ";
  CHECK(compaction::prompt(cfg) == ours);
}

TEST_CASE("compaction: the request is the history plus the prompt as the last user message") {
  History h{msg("user", "hi"), msg("assistant", "hello")};
  auto in = compaction::request_input(h, "Summarise");
  REQUIRE(in.size() == 3);
  CHECK(in.back().get_if<MessageItem>()->role == "user");
  CHECK(in.back().get_if<MessageItem>()->text() == "Summarise");
  CHECK(h.size() == 2);  // the history itself is untouched
  CHECK(&in[0] == &h[0]);  // and shared, not copied
}

TEST_CASE("compaction: dropping the oldest item takes its call/output partner along") {
  History h{call("c1"), msg("user", "a"), output("c1"), msg("assistant", "b")};
  REQUIRE(compaction::drop_oldest(h));
  REQUIRE(h.size() == 2);
  CHECK(h[0].get_if<MessageItem>()->text() == "a");
  REQUIRE(compaction::drop_oldest(h));
  CHECK(h.size() == 1);
  CHECK_FALSE(compaction::drop_oldest(h));  // one item left: nothing more to drop
}

TEST_CASE("compaction: context-window errors are recognised, others are not") {
  CHECK(retry::is_context_window_error("This model's maximum context length is 8192 tokens"));
  CHECK(retry::is_context_window_error(R"({"error":{"code":"context_length_exceeded"}})"));
  CHECK(retry::is_context_window_error("prompt is too long: 210000 tokens > 200000 maximum"));
  CHECK_FALSE(retry::is_context_window_error("Rate limit exceeded"));
}

TEST_CASE("compaction: the summary is the last assistant text, user messages skip instructions") {
  std::vector<ResponseItem> items{msg("assistant", "first"), msg("user", "x"), msg("assistant", "SUMMARY")};
  CHECK(compaction::summary_of(items) == "SUMMARY");
  CHECK(compaction::summary_of({msg("user", "only user")}) == "");
  std::vector<ResponseItem> h{msg("user", "<environment_context>\n</environment_context>"),
                              msg("user", "# AGENTS.md instructions for /w\n\nbe nice"), msg("user", "real one"),
                              msg("assistant", "answer"), msg("user", "second")};
  CHECK(compaction::user_messages(h) == std::vector<std::string>{"real one", "second"});
}

TEST_CASE("compaction: auto limit = configured limit, else 90% of the window (configured or known)") {
  Config cfg;
  cfg.model = "anthropic/claude-sonnet-4-20250514";
  CHECK_FALSE(compaction::auto_limit(cfg, models::spec_of({}, cfg.model, WireApi::chat)).has_value());  // unknown model, nothing configured
  cfg.model_context_window = 100000;
  CHECK(compaction::auto_limit(cfg, models::spec_of({}, cfg.model, WireApi::chat)) == std::optional<int64_t>(90000));
  cfg.model_auto_compact_token_limit = 5000;
  CHECK(compaction::auto_limit(cfg, models::spec_of({}, cfg.model, WireApi::chat)) == std::optional<int64_t>(5000));
  Config known;
  known.model = "gpt-4o";
  CHECK(compaction::auto_limit(known, models::spec_of({}, known.model, WireApi::chat)) == std::optional<int64_t>(115200));
}

TEST_CASE("compaction: kept user messages are the reference's 80000 bytes, at most a quarter of a smaller limit") {
  Config cfg;
  cfg.model = "anthropic/claude-sonnet-4-20250514";  // unknown to the table: no window
  auto budget = [&] { return compaction::user_message_budget(cfg, models::spec_of({}, cfg.model, WireApi::chat)); };
  CHECK(budget() == 80000);  // no auto-compaction: a manual one keeps the reference's budget
  cfg.model_auto_compact_token_limit = 0;  // 0 is unset
  CHECK(budget() == 80000);
  cfg.model_auto_compact_token_limit = 244800;  // a large window: as the reference
  CHECK(budget() == 80000);
  cfg.model_auto_compact_token_limit = 80000;
  CHECK(budget() == 80000);
  // An 8k model: 7,200 tokens of limit, 1,800 tokens (7,200 bytes) of user messages kept.
  cfg.model_auto_compact_token_limit = 7200;
  CHECK(budget() == 7200);
  cfg.model_auto_compact_token_limit.reset();
  cfg.model_context_window = 8000;  // the limit from the window: 90%
  CHECK(budget() == 7200);
}
