#include "protocol/model/model_catalog.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace llmx::models {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Reasoning summaries with the special apply_patch instructions (o3, o4-mini, llmx-mini-latest).
ModelFamily reasoning_family(std::string_view slug, std::string_view family) {
  ModelFamily f;
  f.slug = std::string(slug);
  f.family = std::string(family);
  f.supports_reasoning_summaries = true;
  f.needs_special_apply_patch_instructions = true;
  return f;
}

ModelFamily special_patch_family(std::string_view slug, std::string_view family) {
  ModelFamily f;
  f.slug = std::string(slug);
  f.family = std::string(family);
  f.needs_special_apply_patch_instructions = true;
  return f;
}

// The slug-named families on the gpt-5-llmx prompt with experimental reasoning summaries.
ModelFamily llmx_family(std::string_view slug) {
  ModelFamily f;
  f.slug = std::string(slug);
  f.family = std::string(slug);
  f.supports_reasoning_summaries = true;
  f.reasoning_summary_format = ReasoningSummaryFormat::experimental;
  f.base_instructions = BasePrompt::gpt5_llmx;
  return f;
}

ModelInfo info(int64_t window, int64_t max_output) { return {window, max_output, window * 9 / 10}; }

ReasoningEffortPreset effort(std::string_view e, std::string_view description) {
  return {std::string(e), std::string(description)};
}

ModelPreset preset(std::string_view id, std::string_view description, std::vector<ReasoningEffortPreset> efforts,
                   bool is_default) {
  ModelPreset p;
  p.id = p.model = p.display_name = std::string(id);
  p.description = std::string(description);
  p.supported_reasoning_efforts = std::move(efforts);
  p.default_reasoning_effort = "medium";
  p.is_default = is_default;
  return p;
}

// The four efforts with gpt-5's descriptions: what a model outside the presets is offered.
std::vector<ReasoningEffortPreset> standard_efforts() {
  return {
      effort("minimal", "Fastest responses with little reasoning"),
      effort("low", "Balances speed with some reasoning; useful for straightforward queries and short explanations"),
      effort("medium", "Provides a solid balance of reasoning depth and latency for general-purpose tasks"),
      effort("high", "Maximizes reasoning depth for complex or ambiguous problems"),
  };
}

}  // namespace

ModelFamily find_family(std::string_view slug) {
  if (starts_with(slug, "o3")) return reasoning_family(slug, "o3");
  if (starts_with(slug, "o4-mini")) return reasoning_family(slug, "o4-mini");
  if (starts_with(slug, "llmx-mini-latest")) {
    auto f = reasoning_family(slug, "llmx-mini-latest");
    f.shell_type = ShellToolType::local;
    return f;
  }
  if (starts_with(slug, "gpt-4.1")) return special_patch_family(slug, "gpt-4.1");
  if (starts_with(slug, "gpt-oss") || starts_with(slug, "openai/gpt-oss")) {
    ModelFamily f;
    f.slug = std::string(slug);
    f.family = "gpt-oss";
    f.apply_patch_tool_type = ApplyPatchToolType::function;
    return f;
  }
  if (starts_with(slug, "gpt-4o")) return special_patch_family(slug, "gpt-4o");
  if (starts_with(slug, "gpt-3.5")) return special_patch_family(slug, "gpt-3.5");
  if (starts_with(slug, "porcupine")) {
    ModelFamily f;
    f.slug = std::string(slug);
    f.family = "porcupine";
    f.shell_type = ShellToolType::unified_exec;
    return f;
  }
  if (starts_with(slug, "test-gpt-5-llmx")) {
    auto f = llmx_family(slug);
    f.experimental_supported_tools = {"grep_files", "list_dir", "read_file", "test_sync_tool"};
    f.supports_parallel_tool_calls = true;
    f.support_verbosity = true;
    return f;
  }
  if (starts_with(slug, "llmx-exp-")) {
    auto f = llmx_family(slug);
    f.apply_patch_tool_type = ApplyPatchToolType::freeform;
    f.experimental_supported_tools = {"grep_files", "list_dir", "read_file"};
    f.supports_parallel_tool_calls = true;
    f.support_verbosity = true;
    return f;
  }
  if (slug == "anthropic/claude-sonnet-4-20250514" || starts_with(slug, "gpt-5-llmx") || starts_with(slug, "llmx-")) {
    auto f = llmx_family(slug);
    f.apply_patch_tool_type = ApplyPatchToolType::freeform;
    return f;
  }
  if (starts_with(slug, "gpt-5")) {
    auto f = special_patch_family(slug, "gpt-5");
    f.supports_reasoning_summaries = true;
    f.support_verbosity = true;
    return f;
  }
  ModelFamily f;
  f.slug = f.family = std::string(slug);
  return f;
}

std::optional<ModelInfo> model_info(std::string_view slug) {
  if (slug == "gpt-oss-20b" || slug == "gpt-oss-120b") return info(96000, 32000);
  if (slug == "o3" || slug == "o4-mini" || slug == "llmx-mini-latest") return info(200000, 100000);
  if (slug == "gpt-4.1" || slug == "gpt-4.1-2025-04-14") return info(1047576, 32768);
  if (slug == "gpt-4o" || slug == "gpt-4o-2024-08-06" || slug == "gpt-4o-2024-11-20") return info(128000, 16384);
  if (slug == "gpt-4o-2024-05-13") return info(128000, 4096);
  if (slug == "gpt-3.5-turbo") return info(16385, 4096);
  // `gpt-5*` covers `gpt-5-llmx*`.
  if (starts_with(slug, "gpt-5") || starts_with(slug, "llmx-")) return info(272000, 128000);
  return std::nullopt;
}

std::optional<int64_t> context_window(std::string_view model, std::optional<int64_t> configured) {
  if (configured && *configured > 0) return configured;
  if (auto i = model_info(model)) return i->context_window;
  return std::nullopt;
}

std::optional<int64_t> effective_context_window(std::string_view model, std::optional<int64_t> configured) {
  auto window = context_window(model, configured);
  if (!window) return std::nullopt;
  return *window * find_family(model).effective_context_window_percent / 100;
}

std::optional<int64_t> auto_compact_limit(std::string_view model, std::optional<int64_t> configured_limit,
                                          std::optional<int64_t> configured_window) {
  if (configured_limit && *configured_limit > 0) return configured_limit;
  if (auto window = context_window(model, configured_window)) return *window * 9 / 10;
  return std::nullopt;
}

std::vector<ModelPreset> builtin_presets(bool chatgpt_login) {
  std::vector<ModelPreset> out;
  out.push_back(preset("gpt-5-llmx", "Optimized for llmx.",
                       {effort("low", "Fastest responses with limited reasoning"),
                        effort("medium", "Dynamically adjusts reasoning based on the task"),
                        effort("high", "Maximizes reasoning depth for complex or ambiguous problems")},
                       true));
  if (chatgpt_login)
    out.push_back(preset("gpt-5-llmx-mini", "Optimized for llmx. Cheaper, faster, but less capable.",
                         {effort("medium", "Dynamically adjusts reasoning based on the task"),
                          effort("high", "Maximizes reasoning depth for complex or ambiguous problems")},
                         false));
  out.push_back(preset("gpt-5", "Broad world knowledge with strong general reasoning.", standard_efforts(), false));
  return out;
}

std::vector<ModelPreset> available_models(const std::string& configured_model, bool chatgpt_login) {
  auto out = builtin_presets(chatgpt_login);
  if (configured_model.empty()) return out;
  bool is_preset = std::any_of(out.begin(), out.end(), [&](const ModelPreset& p) { return p.model == configured_model; });
  for (auto& p : out) p.is_default = p.model == configured_model;
  if (!is_preset)
    out.insert(out.begin(), preset(configured_model, kConfiguredModelDescription, standard_efforts(), true));
  return out;
}

ModelPage list_models(const std::string& configured_model, std::optional<std::string> cursor,
                      std::optional<int64_t> limit, bool chatgpt_login) {
  return page_of(available_models(configured_model, chatgpt_login), std::move(cursor), limit);
}

ModelPage page_of(std::vector<ModelPreset> all, std::optional<std::string> cursor, std::optional<int64_t> limit) {
  size_t total = all.size();
  size_t start = 0;
  if (cursor) {
    const std::string& c = *cursor;
    bool digits = !c.empty() && std::all_of(c.begin(), c.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), n);
    if (!digits || ec != std::errc() || end != c.data() + c.size())
      throw std::invalid_argument(fmt::format("invalid cursor: {}", c));
    if (n > total) throw std::invalid_argument(fmt::format("cursor {} exceeds total models {}", n, total));
    start = static_cast<size_t>(n);
  }
  size_t count = total - start;
  if (limit) count = std::min<size_t>(count, static_cast<size_t>(std::max<int64_t>(*limit, 1)));
  ModelPage page;
  page.items.assign(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(start)),
                    std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(start + count)));
  if (start + count < total) page.next_cursor = std::to_string(start + count);
  return page;
}

}  // namespace llmx::models
