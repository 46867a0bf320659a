// What a provider serves (issue 19): its model list (`GET /models`), LiteLLM's details
// (`GET /model/info`: context window, output limit, tools, vision, reasoning, prompt caching),
// the built-in table as the fallback, and what one task uses of it. Plain code: the model
// registry (actors/model_registry.cpp) fetches and caches, this reads and decides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/reflect.hpp"
#include "protocol/config/provider.hpp"
#include "protocol/model/model_catalog.hpp"

namespace llmx::models {

// One model as the provider (or the built-in table) describes it; unknown facts stay empty.
struct ModelMeta {
  std::string id;                          // the name requests use (LiteLLM's model_name)
  std::optional<std::string> upstream;     // LiteLLM's litellm_params.model, e.g. "anthropic/claude-…"
  std::optional<std::string> owner;        // LiteLLM's litellm_provider, else /models' owned_by
  std::optional<int64_t> context_window;   // LiteLLM's max_input_tokens
  std::optional<int64_t> max_output_tokens;
  std::optional<bool> tools, vision, reasoning, prompt_caching;
  LLMX_FIELDS(v("id", s.id); v("upstream", s.upstream); v("owner", s.owner);
              v("context_window", s.context_window); v("max_output_tokens", s.max_output_tokens);
              v("tools", s.tools); v("vision", s.vision); v("reasoning", s.reasoning);
              v("prompt_caching", s.prompt_caching))
};

// A provider's catalogue as the registry holds it.
struct ModelCatalog {
  std::string source = "builtin";  // "provider": its live list; "builtin": the table llmx ships
  std::vector<ModelMeta> models;
  std::optional<std::string> note;  // why the table stands in, or which details are missing
  int64_t fetched_at_ms = 0;        // when the live list arrived (0: never)
  LLMX_FIELDS(v("source", s.source); v("models", s.models); v("note", s.note);
              v("fetched_at_ms", s.fetched_at_ms, Field::defaulted))
};

// The ids of an OpenAI-style model list (`{"data":[{"id":…,"owned_by":…}]}`), in its order,
// wildcard routes (`anthropic/*`) left out; throws json::DecodeError when it is not one.
std::vector<ModelMeta> parse_model_list(std::string_view body);

// Adds LiteLLM's `/model/info` details (`{"data":[{model_name, litellm_params, model_info}]}`) to
// the listed models; a model the list lacks is added. Several deployments of one name keep the
// first value of each fact. Throws json::DecodeError when it is not such a document.
void apply_model_info(std::vector<ModelMeta>& models, std::string_view body);

// What the built-in table and families know of a slug (window and output limit for the
// table's models; reasoning for the families that reason).
ModelMeta builtin_meta(std::string_view slug);

// The catalogue when the provider's list cannot be had: the built-in presets, with `note`.
ModelCatalog builtin_catalog(std::string note);

// A live list: `models` with the table's facts filling what the provider left out.
ModelCatalog live_catalog(std::vector<ModelMeta> models, std::optional<std::string> note, int64_t now_ms);

// How one GET of a fetch ended: `status` 0 with `error` when no answer came.
struct FetchResult {
  int64_t status = 0;
  std::string body;
  std::string error;
};

// The catalogue a fetch makes: the live list (with /model/info's details when `info` has them;
// /model/info alone serves when /models failed), else `previous` when it was live (kept, with a
// note that the refresh failed), else the built-in table with a note saying why.
ModelCatalog catalog_from(const FetchResult& list, const std::optional<FetchResult>& info,
                          const ModelCatalog* previous, int64_t now_ms);

// --- what a task uses ----------------------------------------------------------------------

// The facts one task needs about its model, and the wire its provider takes now.
struct ModelSpec {
  std::string source = "builtin";  // where `meta` came from
  ModelMeta meta;                  // the model's entry (or the table's, or only its id)
  WireApi wire = WireApi::chat;    // chat or responses: `auto` resolved
  std::optional<std::string> wire_note;  // why an `auto` provider takes Chat
  LLMX_FIELDS(v("source", s.source); v("meta", s.meta); v("wire", s.wire); v("wire_note", s.wire_note))
};

// The entry for `model` in `catalog` (exact id, else its upstream name), else the table's.
ModelMeta find_model(const ModelCatalog& catalog, std::string_view model);

// The spec of `model` for a provider configured with `wire`: `auto` takes Responses unless
// `fallback` says why the provider takes Chat.
ModelSpec spec_of(const ModelCatalog& catalog, std::string_view model, WireApi wire,
                  std::optional<std::string> fallback = std::nullopt);

// The context window: `configured` when positive, else the model's.
std::optional<int64_t> window_of(const ModelSpec& spec, std::optional<int64_t> configured);

// Whether to send `cache_control` markers (E6): the provider's `prompt_cache` flag; else, when
// the provider says whether the model caches, only for a caching model that needs explicit
// markers (Anthropic's); else by name (`claude`).
bool wants_cache_markers(const ModelSpec& spec, const ModelProviderInfo& provider);

// Whether reasoning settings go with the request: the config's flag; else what the provider
// says of the model; else the family's rule.
bool sends_reasoning(const ModelSpec& spec, std::optional<bool> configured);

// A clear error when the input holds images the model cannot see (the provider says it has no
// vision); nullopt when they may go.
std::optional<std::string> image_refusal(const ModelSpec& spec, size_t images);

// --- the wire fallback (`wire_api = "auto"`) ---------------------------------------------------

// Why a provider's answer to a Responses request means it does not serve that API (404/405, a
// 400/422 naming the route or a Responses-only field as unknown), or nullopt for other errors.
std::optional<std::string> responses_refusal(long status, std::string_view body);

// --- `model/list` -----------------------------------------------------------------------------

// `llmx models --json`: the provider, the configured model, the catalogue's source and note, and
// every model with its facts (`configured` marks the configured one).
std::string catalog_report_json(const ModelCatalog& catalog, const ModelProviderInfo& provider,
                                const std::string& configured_model);

// A token count for people: "512", "128K", "1M".
std::string token_text(int64_t n);
// What the provider says the model can do, for people: "tools, vision, reasoning, prompt caching"
// (those it has; "" when none is known).
std::string capability_text(const ModelMeta& m);

// The catalogue as model/list entries: the provider's models (or the presets), the configured
// model first when the list lacks it, and the configured one as the default.
std::vector<ModelPreset> catalog_presets(const ModelCatalog& catalog, const std::string& configured_model);

}  // namespace llmx::models
