// What llmx knows about models (engine.md §11, §1.12-§1.13, DECISIONS E14, P8): the family a
// model slug belongs to, the context window of the models in the reference's table, the
// auto-compaction threshold, and the catalogue served by `model/list`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/reflect.hpp"

namespace llmx::models {

// --- families (§11.1) ----------------------------------------------------------------------------

enum class ReasoningSummaryFormat { none, experimental };
enum class ApplyPatchToolType { none, function, freeform };  // none: no preference
enum class ShellToolType { default_shell, local, unified_exec };
// Which of the reference's base prompts the family uses. llmx ships its own prompt text
// (DECISIONS E13); this says which kind of model the family is.
enum class BasePrompt { standard, gpt5_llmx };

struct ModelFamily {
  std::string slug;    // the model string as configured
  std::string family;  // the family name (the slug itself for the slug-named families)
  bool needs_special_apply_patch_instructions = false;
  bool supports_reasoning_summaries = false;
  ReasoningSummaryFormat reasoning_summary_format = ReasoningSummaryFormat::none;
  bool supports_parallel_tool_calls = false;
  ApplyPatchToolType apply_patch_tool_type = ApplyPatchToolType::none;
  BasePrompt base_instructions = BasePrompt::standard;
  std::vector<std::string> experimental_supported_tools;
  int64_t effective_context_window_percent = 95;
  bool support_verbosity = false;
  ShellToolType shell_type = ShellToolType::default_shell;
};

// The family of a model slug: the first matching rule of §11.1, else a family named after the
// slug with every default.
ModelFamily find_family(std::string_view slug);

// --- model info (§11.2) --------------------------------------------------------------------------

struct ModelInfo {
  int64_t context_window = 0;
  int64_t max_output_tokens = 0;
  int64_t auto_compact_token_limit = 0;  // context_window * 9 / 10
};

// The table entry for a slug (exact matches first, then the `gpt-5*` / `llmx-*` prefixes);
// nullopt for models the table does not know (the default Anthropic model included).
std::optional<ModelInfo> model_info(std::string_view slug);

// The model's context window: `configured` (model_context_window) when set and positive, else
// the table's, else none.
std::optional<int64_t> context_window(std::string_view model, std::optional<int64_t> configured);

// The window reported to clients (§1.13): context_window() × the family's
// effective_context_window_percent (95) / 100.
std::optional<int64_t> effective_context_window(std::string_view model, std::optional<int64_t> configured);

// The auto-compaction threshold (E14): `configured_limit` (model_auto_compact_token_limit) when
// set and positive, else 90% of context_window(model, configured_window), else none.
std::optional<int64_t> auto_compact_limit(std::string_view model, std::optional<int64_t> configured_limit,
                                          std::optional<int64_t> configured_window);

// --- catalogue (§11.3, `model/list`) ---------------------------------------------------------------

struct ReasoningEffortPreset {
  std::string effort;  // minimal | low | medium | high
  std::string description;
  LLMX_FIELDS(v("reasoningEffort", s.effort); v("description", s.description))
};

// One `model/list` entry, in its wire shape.
struct ModelPreset {
  std::string id;
  std::string model;
  std::string display_name;
  std::string description;
  std::vector<ReasoningEffortPreset> supported_reasoning_efforts;
  std::string default_reasoning_effort = "medium";
  bool is_default = false;
  // What the provider says of the model (issue 19), omitted when unknown: `inputModalities` as in
  // Codex's Model; the rest are llmx's.
  std::optional<std::vector<std::string>> input_modalities;
  std::optional<int64_t> context_window, max_output_tokens;
  std::optional<bool> supports_tools, supports_reasoning, supports_prompt_caching;
  LLMX_FIELDS(v("id", s.id); v("model", s.model); v("displayName", s.display_name);
              v("description", s.description);
              v("supportedReasoningEfforts", s.supported_reasoning_efforts);
              v("defaultReasoningEffort", s.default_reasoning_effort); v("isDefault", s.is_default);
              v("inputModalities", s.input_modalities); v("contextWindow", s.context_window);
              v("maxOutputTokens", s.max_output_tokens); v("supportsTools", s.supports_tools);
              v("supportsReasoning", s.supports_reasoning); v("supportsPromptCaching", s.supports_prompt_caching))
};

inline constexpr std::string_view kConfiguredModelDescription = "Configured in config.toml";

// The reference's presets (§11.3), `gpt-5-llmx` the default. `gpt-5-llmx-mini` is listed only for
// ChatGPT logins, which llmx never has; the flag keeps the rule visible.
std::vector<ModelPreset> builtin_presets(bool chatgpt_login = false);

// The catalogue: the presets, plus `configured_model` first when it is not one of them (id =
// model = display name = the slug, the four standard efforts, default medium). The configured
// model is the only default entry; when it is a preset, that preset is. An empty
// `configured_model` leaves the presets as they are.
std::vector<ModelPreset> available_models(const std::string& configured_model, bool chatgpt_login = false);

struct ModelPage {
  std::vector<ModelPreset> items;
  std::optional<std::string> next_cursor;  // null at the end of the list
};

// One page of available_models(). `cursor` is the decimal index of the first item (what a
// previous page returned as next_cursor); `limit` defaults to everything and values below 1
// mean 1. Throws std::invalid_argument "invalid cursor: <cursor>" for a cursor that is not a
// decimal index and "cursor <n> exceeds total models <total>" past the end.
ModelPage list_models(const std::string& configured_model, std::optional<std::string> cursor,
                      std::optional<int64_t> limit, bool chatgpt_login = false);

// One page of `all`, with the cursor and limit rules of list_models().
ModelPage page_of(std::vector<ModelPreset> all, std::optional<std::string> cursor, std::optional<int64_t> limit);

}  // namespace llmx::models
