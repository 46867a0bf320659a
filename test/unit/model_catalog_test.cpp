// Unit tests for the model catalogue (engine.md §11, §1.13, DECISIONS E14, P8): family rules in
// order, the context-window table, the auto-compaction threshold, presets and `model/list` pages.
#include "protocol/model/model_catalog.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"

using namespace llmx;
using namespace llmx::models;

namespace {
using Strings = std::vector<std::string>;
const Strings kNoTools{};
}  // namespace

TEST_CASE("model family: each rule of §11.1, first match wins") {
  SUBCASE("o3 / o4-mini / llmx-mini-latest: reasoning summaries and special apply_patch instructions") {
    for (auto [slug, family] : std::vector<std::pair<std::string, std::string>>{
             {"o3", "o3"}, {"o3-mini", "o3"}, {"o3-pro-2025", "o3"}, {"o4-mini", "o4-mini"},
             {"o4-mini-high", "o4-mini"}, {"llmx-mini-latest", "llmx-mini-latest"}}) {
      const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
      CAPTURE(shown_slug);
      auto f = find_family(slug);
      CHECK(f.slug == slug);
      CHECK(f.family == family);
      CHECK(f.supports_reasoning_summaries);
      CHECK(f.reasoning_summary_format == ReasoningSummaryFormat::none);
      CHECK(f.needs_special_apply_patch_instructions);
      CHECK(f.apply_patch_tool_type == ApplyPatchToolType::none);
      CHECK(f.base_instructions == BasePrompt::standard);
      CHECK(f.shell_type == (family == "llmx-mini-latest" ? ShellToolType::local : ShellToolType::default_shell));
    }
    // `o4` alone is not `o4-mini`.
    CHECK(find_family("o4").family == "o4");
    CHECK_FALSE(find_family("o4").supports_reasoning_summaries);
  }
  SUBCASE("gpt-4.1 / gpt-4o / gpt-3.5: special apply_patch instructions only") {
    for (auto [slug, family] : std::vector<std::pair<std::string, std::string>>{
             {"gpt-4.1", "gpt-4.1"}, {"gpt-4.1-mini", "gpt-4.1"}, {"gpt-4o", "gpt-4o"},
             {"gpt-4o-mini", "gpt-4o"}, {"gpt-4o-2024-05-13", "gpt-4o"}, {"gpt-3.5-turbo", "gpt-3.5"}}) {
      const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
      CAPTURE(shown_slug);
      auto f = find_family(slug);
      CHECK(f.family == family);
      CHECK(f.needs_special_apply_patch_instructions);
      CHECK_FALSE(f.supports_reasoning_summaries);
      CHECK_FALSE(f.support_verbosity);
    }
  }
  SUBCASE("gpt-oss, with or without the openai/ prefix: function apply_patch") {
    for (std::string slug : {"gpt-oss-20b", "gpt-oss:120b", "openai/gpt-oss-20b", "openai/gpt-oss-120b"}) {
      const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
      CAPTURE(shown_slug);
      auto f = find_family(slug);
      CHECK(f.family == "gpt-oss");
      CHECK(f.slug == slug);
      CHECK(f.apply_patch_tool_type == ApplyPatchToolType::function);
      CHECK_FALSE(f.needs_special_apply_patch_instructions);
    }
    // Other provider prefixes do not count.
    CHECK(find_family("ollama/gpt-oss-20b").family == "ollama/gpt-oss-20b");
  }
  SUBCASE("porcupine: unified exec shell") {
    auto f = find_family("porcupine-1");
    CHECK(f.family == "porcupine");
    CHECK(f.shell_type == ShellToolType::unified_exec);
    CHECK_FALSE(f.needs_special_apply_patch_instructions);
  }
  SUBCASE("test-gpt-5-llmx: experimental tools incl. test_sync_tool, parallel calls, verbosity") {
    auto f = find_family("test-gpt-5-llmx-x");
    CHECK(f.family == "test-gpt-5-llmx-x");
    CHECK(f.supports_reasoning_summaries);
    CHECK(f.reasoning_summary_format == ReasoningSummaryFormat::experimental);
    CHECK(f.base_instructions == BasePrompt::gpt5_llmx);
    CHECK(f.experimental_supported_tools == Strings{"grep_files", "list_dir", "read_file", "test_sync_tool"});
    CHECK(f.supports_parallel_tool_calls);
    CHECK(f.support_verbosity);
    CHECK(f.apply_patch_tool_type == ApplyPatchToolType::none);
  }
  SUBCASE("llmx-exp-: freeform apply_patch, experimental tools, parallel calls, verbosity") {
    auto f = find_family("llmx-exp-7");
    CHECK(f.family == "llmx-exp-7");
    CHECK(f.reasoning_summary_format == ReasoningSummaryFormat::experimental);
    CHECK(f.base_instructions == BasePrompt::gpt5_llmx);
    CHECK(f.apply_patch_tool_type == ApplyPatchToolType::freeform);
    CHECK(f.experimental_supported_tools == Strings{"grep_files", "list_dir", "read_file"});
    CHECK(f.supports_parallel_tool_calls);
    CHECK(f.support_verbosity);
  }
  SUBCASE("the default model, gpt-5-llmx* and llmx-*: freeform apply_patch, no verbosity") {
    for (std::string slug : {"anthropic/claude-sonnet-4-20250514", "gpt-5-llmx", "gpt-5-llmx-mini", "llmx-1"}) {
      const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
      CAPTURE(shown_slug);
      auto f = find_family(slug);
      CHECK(f.family == slug);
      CHECK(f.supports_reasoning_summaries);
      CHECK(f.reasoning_summary_format == ReasoningSummaryFormat::experimental);
      CHECK(f.base_instructions == BasePrompt::gpt5_llmx);
      CHECK(f.apply_patch_tool_type == ApplyPatchToolType::freeform);
      CHECK(f.experimental_supported_tools == kNoTools);
      CHECK_FALSE(f.supports_parallel_tool_calls);
      CHECK_FALSE(f.support_verbosity);
    }
    // Only that exact Anthropic slug: others fall to the defaults.
    CHECK(find_family("anthropic/claude-sonnet-4-20250514-v2").base_instructions == BasePrompt::standard);
  }
  SUBCASE("gpt-5: reasoning summaries, special apply_patch instructions, verbosity") {
    for (std::string slug : {"gpt-5", "gpt-5-mini", "gpt-5.1"}) {
      const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
      CAPTURE(shown_slug);
      auto f = find_family(slug);
      CHECK(f.family == "gpt-5");
      CHECK(f.supports_reasoning_summaries);
      CHECK(f.reasoning_summary_format == ReasoningSummaryFormat::none);
      CHECK(f.needs_special_apply_patch_instructions);
      CHECK(f.support_verbosity);
      CHECK(f.base_instructions == BasePrompt::standard);
    }
  }
  SUBCASE("anything else: named after the slug, all defaults") {
    for (std::string slug : {"openai/gpt-4o", "anthropic/claude-3-5-sonnet-20241022", "mistral", ""}) {
      const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
      CAPTURE(shown_slug);
      auto f = find_family(slug);
      CHECK(f.family == slug);
      CHECK_FALSE(f.needs_special_apply_patch_instructions);
      CHECK_FALSE(f.supports_reasoning_summaries);
      CHECK(f.reasoning_summary_format == ReasoningSummaryFormat::none);
      CHECK_FALSE(f.supports_parallel_tool_calls);
      CHECK(f.apply_patch_tool_type == ApplyPatchToolType::none);
      CHECK(f.base_instructions == BasePrompt::standard);
      CHECK(f.experimental_supported_tools == kNoTools);
      CHECK(f.effective_context_window_percent == 95);
      CHECK_FALSE(f.support_verbosity);
      CHECK(f.shell_type == ShellToolType::default_shell);
    }
  }
}

TEST_CASE("model info: exact slugs, then the gpt-5 / llmx- prefixes") {
  auto check = [](const std::string& slug, int64_t window, int64_t max_output) {
    const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_slug);
    auto i = model_info(slug);
    REQUIRE(i.has_value());
    CHECK(i->context_window == window);
    CHECK(i->max_output_tokens == max_output);
    CHECK(i->auto_compact_token_limit == window * 9 / 10);
  };
  check("gpt-oss-20b", 96000, 32000);
  check("gpt-oss-120b", 96000, 32000);
  check("o3", 200000, 100000);
  check("o4-mini", 200000, 100000);
  check("llmx-mini-latest", 200000, 100000);  // exact entry beats the llmx- prefix
  check("gpt-4.1", 1047576, 32768);
  check("gpt-4.1-2025-04-14", 1047576, 32768);
  check("gpt-4o", 128000, 16384);
  check("gpt-4o-2024-08-06", 128000, 16384);
  check("gpt-4o-2024-11-20", 128000, 16384);
  check("gpt-4o-2024-05-13", 128000, 4096);
  check("gpt-3.5-turbo", 16385, 4096);
  check("gpt-5", 272000, 128000);
  check("gpt-5-llmx", 272000, 128000);
  check("gpt-5-mini", 272000, 128000);
  check("llmx-anything", 272000, 128000);
  CHECK(model_info("o3")->auto_compact_token_limit == 180000);
  // Exact entries are exact: no prefix matching for them.
  for (std::string slug : {"anthropic/claude-sonnet-4-20250514", "gpt-4o-mini", "o3-mini", "openai/gpt-oss-20b",
                           "gpt-4.1-mini", "gpt-3.5-turbo-16k", "openai/gpt-5", ""}) {
    const auto& shown_slug = slug;  // clang 14 cannot capture a structured binding
    CAPTURE(shown_slug);
    CHECK_FALSE(model_info(slug).has_value());
  }
}

TEST_CASE("context windows: configured value, else the table, effective window is 95%") {
  CHECK(context_window("gpt-4o", std::nullopt) == std::optional<int64_t>(128000));
  CHECK(context_window("gpt-4o", 50000) == std::optional<int64_t>(50000));
  CHECK(context_window("anthropic/claude-sonnet-4-20250514", std::nullopt) == std::nullopt);
  CHECK(context_window("anthropic/claude-sonnet-4-20250514", 200000) == std::optional<int64_t>(200000));
  CHECK(context_window("gpt-4o", 0) == std::optional<int64_t>(128000));  // non-positive: unset
  CHECK(effective_context_window("gpt-4o", std::nullopt) == std::optional<int64_t>(121600));
  CHECK(effective_context_window("gpt-3.5-turbo", std::nullopt) == std::optional<int64_t>(16385 * 95 / 100));
  CHECK(effective_context_window("my-model", 200000) == std::optional<int64_t>(190000));
  CHECK(effective_context_window("my-model", std::nullopt) == std::nullopt);
}

TEST_CASE("auto-compact limit (E14): configured limit > 90% of the window > none") {
  // The configured limit wins over everything.
  CHECK(auto_compact_limit("gpt-4o", 1000, 50000) == std::optional<int64_t>(1000));
  CHECK(auto_compact_limit("unknown", 1000, std::nullopt) == std::optional<int64_t>(1000));
  // Else 90% of the configured window, else of the table's.
  CHECK(auto_compact_limit("gpt-4o", std::nullopt, 50000) == std::optional<int64_t>(45000));
  CHECK(auto_compact_limit("gpt-4o", std::nullopt, std::nullopt) == std::optional<int64_t>(115200));
  CHECK(auto_compact_limit("anthropic/claude-sonnet-4-20250514", std::nullopt, 200000) ==
        std::optional<int64_t>(180000));
  CHECK(auto_compact_limit("gpt-3.5-turbo", std::nullopt, std::nullopt) == std::optional<int64_t>(16385 * 9 / 10));
  // Unknown model, nothing configured: no auto-compaction.
  CHECK(auto_compact_limit("anthropic/claude-sonnet-4-20250514", std::nullopt, std::nullopt) == std::nullopt);
  // Non-positive configured values count as unset.
  CHECK(auto_compact_limit("gpt-4o", 0, std::nullopt) == std::optional<int64_t>(115200));
  CHECK(auto_compact_limit("unknown", -5, std::nullopt) == std::nullopt);
}

TEST_CASE("presets: the reference's table, exactly, on the wire") {
  auto presets = builtin_presets();
  REQUIRE(presets.size() == 2);
  CHECK(json::to_json(presets[0]) ==
        R"({"id":"gpt-5-llmx","model":"gpt-5-llmx","displayName":"gpt-5-llmx","description":"Optimized for llmx.",)"
        R"("supportedReasoningEfforts":[{"reasoningEffort":"low","description":"Fastest responses with limited reasoning"},)"
        R"({"reasoningEffort":"medium","description":"Dynamically adjusts reasoning based on the task"},)"
        R"({"reasoningEffort":"high","description":"Maximizes reasoning depth for complex or ambiguous problems"}],)"
        R"("defaultReasoningEffort":"medium","isDefault":true})");
  CHECK(json::to_json(presets[1]) ==
        R"({"id":"gpt-5","model":"gpt-5","displayName":"gpt-5","description":"Broad world knowledge with strong general reasoning.",)"
        R"("supportedReasoningEfforts":[{"reasoningEffort":"minimal","description":"Fastest responses with little reasoning"},)"
        R"({"reasoningEffort":"low","description":"Balances speed with some reasoning; useful for straightforward queries and short explanations"},)"
        R"({"reasoningEffort":"medium","description":"Provides a solid balance of reasoning depth and latency for general-purpose tasks"},)"
        R"({"reasoningEffort":"high","description":"Maximizes reasoning depth for complex or ambiguous problems"}],)"
        R"("defaultReasoningEffort":"medium","isDefault":false})");

  SUBCASE("gpt-5-llmx-mini only with a ChatGPT login") {
    auto with = builtin_presets(true);
    REQUIRE(with.size() == 3);
    CHECK(with[1].id == "gpt-5-llmx-mini");
    CHECK(json::to_json(with[1]) ==
          R"({"id":"gpt-5-llmx-mini","model":"gpt-5-llmx-mini","displayName":"gpt-5-llmx-mini",)"
          R"("description":"Optimized for llmx. Cheaper, faster, but less capable.",)"
          R"("supportedReasoningEfforts":[{"reasoningEffort":"medium","description":"Dynamically adjusts reasoning based on the task"},)"
          R"({"reasoningEffort":"high","description":"Maximizes reasoning depth for complex or ambiguous problems"}],)"
          R"("defaultReasoningEffort":"medium","isDefault":false})");
  }
}

TEST_CASE("catalogue: the configured model is listed first and is the only default") {
  auto all = available_models("anthropic/claude-sonnet-4-20250514");
  REQUIRE(all.size() == 3);
  CHECK(json::to_json(all[0]) ==
        R"({"id":"anthropic/claude-sonnet-4-20250514","model":"anthropic/claude-sonnet-4-20250514",)"
        R"("displayName":"anthropic/claude-sonnet-4-20250514","description":"Configured in config.toml",)"
        R"("supportedReasoningEfforts":[{"reasoningEffort":"minimal","description":"Fastest responses with little reasoning"},)"
        R"({"reasoningEffort":"low","description":"Balances speed with some reasoning; useful for straightforward queries and short explanations"},)"
        R"({"reasoningEffort":"medium","description":"Provides a solid balance of reasoning depth and latency for general-purpose tasks"},)"
        R"({"reasoningEffort":"high","description":"Maximizes reasoning depth for complex or ambiguous problems"}],)"
        R"("defaultReasoningEffort":"medium","isDefault":true})");
  CHECK(all[1].id == "gpt-5-llmx");
  CHECK_FALSE(all[1].is_default);
  CHECK(all[2].id == "gpt-5");
  CHECK_FALSE(all[2].is_default);

  SUBCASE("a configured preset is not repeated and becomes the default") {
    auto models = available_models("gpt-5");
    REQUIRE(models.size() == 2);
    CHECK(models[0].id == "gpt-5-llmx");
    CHECK_FALSE(models[0].is_default);
    CHECK(models[1].id == "gpt-5");
    CHECK(models[1].is_default);
    auto llmx = available_models("gpt-5-llmx");
    REQUIRE(llmx.size() == 2);
    CHECK(llmx[0].is_default);
    CHECK_FALSE(llmx[1].is_default);
  }
  SUBCASE("no configured model: the presets as they are") {
    auto models = available_models("");
    REQUIRE(models.size() == 2);
    CHECK(models[0].is_default);
  }
}

TEST_CASE("model/list pages: cursor is the decimal index of the next item") {
  const std::string model = "my/model";
  auto ids = [](const ModelPage& p) {
    Strings out;
    for (const auto& m : p.items) out.push_back(m.id);
    return out;
  };
  SUBCASE("no limit: everything, no next cursor") {
    auto page = list_models(model, std::nullopt, std::nullopt);
    CHECK(ids(page) == Strings{"my/model", "gpt-5-llmx", "gpt-5"});
    CHECK_FALSE(page.next_cursor.has_value());
  }
  SUBCASE("walking pages of 1") {
    Strings seen;
    std::optional<std::string> cursor;
    Strings cursors;
    for (int i = 0; i < 10; ++i) {
      auto page = list_models(model, cursor, 1);
      REQUIRE(page.items.size() == 1);
      seen.push_back(page.items[0].id);
      cursor = page.next_cursor;
      if (!cursor) break;
      cursors.push_back(*cursor);
    }
    CHECK(seen == Strings{"my/model", "gpt-5-llmx", "gpt-5"});
    CHECK(cursors == Strings{"1", "2"});
  }
  SUBCASE("walking pages of 2") {
    auto first = list_models(model, std::nullopt, 2);
    CHECK(ids(first) == Strings{"my/model", "gpt-5-llmx"});
    REQUIRE(first.next_cursor == std::optional<std::string>("2"));
    auto second = list_models(model, first.next_cursor, 2);
    CHECK(ids(second) == Strings{"gpt-5"});
    CHECK_FALSE(second.next_cursor.has_value());
  }
  SUBCASE("limits below 1 mean 1; a limit past the end is cut") {
    CHECK(list_models(model, std::nullopt, 0).items.size() == 1);
    CHECK(list_models(model, std::nullopt, -3).items.size() == 1);
    auto page = list_models(model, std::string("1"), 100);
    CHECK(ids(page) == Strings{"gpt-5-llmx", "gpt-5"});
    CHECK_FALSE(page.next_cursor.has_value());
  }
  SUBCASE("a cursor at the end gives an empty last page") {
    auto page = list_models(model, std::string("3"), 1);
    CHECK(page.items.empty());
    CHECK_FALSE(page.next_cursor.has_value());
  }
  SUBCASE("invalid cursors") {
    for (std::string bad : {"", "abc", "-1", "+1", "1.0", " 1", "1 ", "0x1", "99999999999999999999999"}) {
      CAPTURE(bad);
      CHECK_THROWS_WITH_AS(list_models(model, bad, 1), ("invalid cursor: " + bad).c_str(), std::invalid_argument);
    }
    CHECK_THROWS_WITH_AS(list_models(model, std::string("4"), 1), "cursor 4 exceeds total models 3",
                         std::invalid_argument);
  }
  SUBCASE("the page is what the wire sends") {
    auto page = list_models("gpt-5-llmx", std::nullopt, 1);
    REQUIRE(page.items.size() == 1);
    CHECK(json::to_json(page.items) ==
          R"([{"id":"gpt-5-llmx","model":"gpt-5-llmx","displayName":"gpt-5-llmx","description":"Optimized for llmx.",)"
          R"("supportedReasoningEfforts":[{"reasoningEffort":"low","description":"Fastest responses with limited reasoning"},)"
          R"({"reasoningEffort":"medium","description":"Dynamically adjusts reasoning based on the task"},)"
          R"({"reasoningEffort":"high","description":"Maximizes reasoning depth for complex or ambiguous problems"}],)"
          R"("defaultReasoningEffort":"medium","isDefault":true}])");
    CHECK(page.next_cursor == std::optional<std::string>("1"));
  }
}
