#include "protocol/model/provider_models.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/base/text.hpp"

namespace llmx::models {

namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return text::lower(haystack).find(needle) != std::string::npos;
}

// A token count: LiteLLM writes integers, some configs floats; anything else is unknown.
std::optional<int64_t> count_if(json::Object o, std::string_view key) {
  auto e = json::get(o, key);
  if (!e) return std::nullopt;
  if (auto i = e->get_int64(); !i.error() && i.value() > 0) return i.value();
  if (auto u = e->get_uint64(); !u.error() && u.value() > 0) return static_cast<int64_t>(std::min<uint64_t>(u.value(), INT64_MAX));
  if (auto d = e->get_double(); !d.error() && d.value() >= 1 && d.value() < 9e18) return static_cast<int64_t>(d.value());
  return std::nullopt;
}

std::optional<bool> flag_if(json::Object o, std::string_view key) {
  auto e = json::get(o, key);
  if (!e || !e->is_bool()) return std::nullopt;
  return e->get_bool().value_unsafe();
}

template <class T>
void keep_first(std::optional<T>& into, const std::optional<T>& from) {
  if (!into && from) into = from;
}

// Another deployment of the same name: LiteLLM may route a request to any of them, so the
// group can do what every deployment can (the smaller limits, a capability all say they have).
void merge_deployment(ModelMeta& m, const ModelMeta& d) {
  auto least = [](std::optional<int64_t>& into, const std::optional<int64_t>& from) {
    if (from) into = into ? std::min(*into, *from) : *from;
  };
  auto all = [](std::optional<bool>& into, const std::optional<bool>& from) {
    if (from) into = into ? (*into && *from) : *from;
  };
  least(m.context_window, d.context_window);
  least(m.max_output_tokens, d.max_output_tokens);
  all(m.tools, d.tools);
  all(m.vision, d.vision);
  all(m.reasoning, d.reasoning);
  all(m.prompt_caching, d.prompt_caching);
}

void fill(ModelMeta& m, const ModelMeta& from) {
  keep_first(m.upstream, from.upstream);
  keep_first(m.owner, from.owner);
  keep_first(m.context_window, from.context_window);
  keep_first(m.max_output_tokens, from.max_output_tokens);
  keep_first(m.tools, from.tools);
  keep_first(m.vision, from.vision);
  keep_first(m.reasoning, from.reasoning);
  keep_first(m.prompt_caching, from.prompt_caching);
}

json::Array data_array(json::Parser& parser, std::string_view body, std::string_view what) {
  auto root = parser.parse(body);
  if (!root.is_object()) throw json::DecodeError(fmt::format("{} is not a JSON object", what));
  auto data = json::get(root.get_object().value_unsafe(), "data");
  if (!data || !data->is_array()) throw json::DecodeError(fmt::format("{} has no `data` array", what));
  return data->get_array().value_unsafe();
}

// Modes of LiteLLM models that cannot hold a conversation (embeddings, images, audio...).
bool chat_mode(std::optional<std::string_view> mode) {
  return !mode || *mode == "chat" || *mode == "responses";
}

bool chat_name(std::string_view id) {
  static constexpr std::string_view kNotChat[] = {"embedding", "tts", "whisper", "dall-e", "moderation",
                                                  "transcribe", "davinci", "babbage", "realtime", "-audio",
                                                  "image", "sora", "-search"};
  return std::none_of(std::begin(kNotChat), std::end(kNotChat), [&](auto s) { return contains(id, s); });
}

std::string describe(const ModelMeta& m) {
  std::vector<std::string> parts;
  if (m.upstream && *m.upstream != m.id) parts.push_back(*m.upstream);
  if (m.context_window) parts.push_back(token_text(*m.context_window) + " context");
  if (auto caps = capability_text(m); !caps.empty()) parts.push_back(caps);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out.empty() ? "Served by the provider" : out;
}

std::vector<ReasoningEffortPreset> efforts_for(const ModelMeta& m) {
  if (m.reasoning && !*m.reasoning) return {};
  return {{"minimal", "Fastest responses with little reasoning"},
          {"low", "Balances speed with some reasoning; useful for straightforward queries and short explanations"},
          {"medium", "Provides a solid balance of reasoning depth and latency for general-purpose tasks"},
          {"high", "Maximizes reasoning depth for complex or ambiguous problems"}};
}

// The facts a preset shows besides its name.
void annotate(ModelPreset& p, const ModelMeta& m) {
  p.context_window = m.context_window;
  p.max_output_tokens = m.max_output_tokens;
  if (m.vision) p.input_modalities = *m.vision ? std::vector<std::string>{"text", "image"} : std::vector<std::string>{"text"};
  p.supports_tools = m.tools;
  p.supports_reasoning = m.reasoning;
  p.supports_prompt_caching = m.prompt_caching;
}

}  // namespace

std::string catalog_report_json(const ModelCatalog& c, const ModelProviderInfo& provider,
                                const std::string& configured_model) {
  json::Writer w;
  w.begin_object().field("provider", provider.id).field("base_url", provider.base_url);
  w.field("configured_model", configured_model).field("source", c.source);
  if (c.note) w.field("note", *c.note);
  w.key("models").begin_array();
  for (const auto& m : c.models) {
    w.begin_object();
    json::write_fields(w, m);
    w.field("configured", m.id == configured_model);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

std::string token_text(int64_t n) {
  if (n >= 1000000 && n % 1000000 == 0) return fmt::format("{}M", n / 1000000);
  if (n >= 1000) return fmt::format("{}K", (n + 500) / 1000);
  return std::to_string(n);
}

std::string capability_text(const ModelMeta& m) {
  std::string caps;
  auto add = [&](const std::optional<bool>& f, std::string_view name) {
    if (f && *f) caps += (caps.empty() ? "" : ", ") + std::string(name);
  };
  add(m.tools, "tools");
  add(m.vision, "vision");
  add(m.reasoning, "reasoning");
  add(m.prompt_caching, "prompt caching");
  return caps;
}

std::vector<ModelMeta> parse_model_list(std::string_view body) {
  json::Parser parser;
  std::vector<ModelMeta> out;
  for (auto e : data_array(parser, body, "the model list")) {
    if (!e.is_object()) continue;
    json::Object o = e.get_object().value_unsafe();
    auto id = json::string_if(o, "id");
    if (!id || id->empty() || id->find('*') != std::string_view::npos) continue;
    if (std::any_of(out.begin(), out.end(), [&](const ModelMeta& m) { return m.id == *id; })) continue;
    ModelMeta m;
    m.id = std::string(*id);
    if (auto owner = json::string_if(o, "owned_by")) m.owner = std::string(*owner);
    out.push_back(std::move(m));
  }
  return out;
}

void apply_model_info(std::vector<ModelMeta>& models, std::string_view body) {
  json::Parser parser;
  std::vector<std::string> not_chat;
  for (auto e : data_array(parser, body, "the /model/info answer")) {
    if (!e.is_object()) continue;
    json::Object entry = e.get_object().value_unsafe();
    auto name = json::string_if(entry, "model_name");
    if (!name || name->empty() || name->find('*') != std::string_view::npos) continue;
    ModelMeta found;
    found.id = std::string(*name);
    if (auto params = json::object_if(entry, "litellm_params"))
      if (auto model = json::string_if(*params, "model")) found.upstream = std::string(*model);
    std::optional<std::string_view> mode;
    if (auto info = json::object_if(entry, "model_info")) {
      mode = json::string_if(*info, "mode");
      if (auto owner = json::string_if(*info, "litellm_provider")) found.owner = std::string(*owner);
      // LiteLLM's `max_tokens` is a legacy field (the output limit where one is known), so the
      // window is only ever max_input_tokens.
      found.context_window = count_if(*info, "max_input_tokens");
      found.max_output_tokens = count_if(*info, "max_output_tokens");
      if (!found.max_output_tokens) found.max_output_tokens = count_if(*info, "max_tokens");
      found.tools = flag_if(*info, "supports_function_calling");
      found.vision = flag_if(*info, "supports_vision");
      found.reasoning = flag_if(*info, "supports_reasoning");
      found.prompt_caching = flag_if(*info, "supports_prompt_caching");
    }
    if (!chat_mode(mode)) {
      not_chat.push_back(found.id);
      continue;
    }
    auto it = std::find_if(models.begin(), models.end(), [&](const ModelMeta& m) { return m.id == found.id; });
    if (it == models.end()) {
      models.push_back(std::move(found));
    } else {
      // /models' owner is the proxy's word, LiteLLM's provider the deployment's; the first
      // deployment names the group, every one of them limits it.
      bool first = !it->upstream;
      if (first && found.owner) it->owner.reset();
      if (first) {
        fill(*it, found);
      } else {
        merge_deployment(*it, found);
      }
    }
  }
  // An embedding or image model is no use to an agent: out of the list, unless a chat
  // deployment of the same name is in it.
  for (const auto& id : not_chat) {
    auto it = std::find_if(models.begin(), models.end(), [&](const ModelMeta& m) { return m.id == id; });
    if (it != models.end() && !it->upstream) models.erase(it);
  }
}

ModelMeta builtin_meta(std::string_view slug) {
  ModelMeta m;
  m.id = std::string(slug);
  // A LiteLLM route (`openai/gpt-4o`) is its model behind a provider prefix.
  auto bare = slug.substr(slug.find('/') == std::string_view::npos ? 0 : slug.rfind('/') + 1);
  auto info = model_info(slug);
  if (!info) info = model_info(bare);
  if (info) {
    m.context_window = info->context_window;
    m.max_output_tokens = info->max_output_tokens;
  }
  if (find_family(slug).supports_reasoning_summaries && info) m.reasoning = true;
  return m;
}

ModelCatalog builtin_catalog(std::string note) {
  ModelCatalog c;
  c.source = "builtin";
  c.note = std::move(note);
  for (const auto& p : builtin_presets()) c.models.push_back(builtin_meta(p.model));
  return c;
}

ModelCatalog live_catalog(std::vector<ModelMeta> models, std::optional<std::string> note, int64_t now_ms) {
  ModelCatalog c;
  c.source = "provider";
  c.note = std::move(note);
  c.fetched_at_ms = now_ms;
  // Without LiteLLM's modes (OpenAI's own list), the models an agent cannot talk to go by name.
  std::erase_if(models, [](const ModelMeta& m) { return !m.upstream && !chat_name(m.id); });
  for (auto& m : models) {
    fill(m, builtin_meta(m.id));
    if (m.upstream) fill(m, builtin_meta(*m.upstream));
  }
  c.models = std::move(models);
  return c;
}

namespace {
bool ok(const FetchResult& r) { return r.status >= 200 && r.status <= 299; }

std::string why(const FetchResult& r, std::string_view what) {
  if (r.status == 0) return fmt::format("{}: {}", what, r.error.empty() ? "no answer" : r.error);
  auto body = r.body.substr(0, 120);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  return fmt::format("{} answered HTTP {}{}{}", what, r.status, body.empty() ? "" : ": ", body);
}
}  // namespace

ModelCatalog catalog_from(const FetchResult& list, const std::optional<FetchResult>& info,
                          const ModelCatalog* previous, int64_t now_ms) {
  std::optional<std::vector<ModelMeta>> models;
  std::string list_problem;
  if (!ok(list)) {
    list_problem = why(list, "GET /models");
  } else {
    try {
      models = parse_model_list(list.body);
    } catch (const std::exception& e) {
      list_problem = fmt::format("GET /models answered something that is not a model list ({})", e.what());
    }
  }
  std::optional<std::string> note;
  if (info) {
    std::vector<ModelMeta> detailed = models.value_or(std::vector<ModelMeta>{});
    if (ok(*info)) {
      try {
        apply_model_info(detailed, info->body);
        if (!models && !detailed.empty()) models = std::move(detailed);  // LiteLLM without /models
        else if (models) models = std::move(detailed);
      } catch (const std::exception& e) {
        note = fmt::format("the provider's /model/info answer could not be read ({}); context windows and "
                           "capabilities come from llmx's built-in table where it knows the model",
                           e.what());
      }
    } else if (info->status != 404 && info->status != 405) {  // 404: not a LiteLLM proxy, nothing to say
      note = fmt::format("{}; context windows and capabilities come from llmx's built-in table where it knows "
                         "the model", why(*info, "GET /model/info"));
    }
  }
  if (models) return live_catalog(std::move(*models), std::move(note), now_ms);
  if (previous && previous->source == "provider") {
    ModelCatalog kept = *previous;
    kept.note = fmt::format("the last refresh failed ({}); this list is from an earlier answer", list_problem);
    return kept;
  }
  return builtin_catalog(fmt::format("the provider's model list is unavailable ({}); showing llmx's built-in models",
                                     list_problem));
}

ModelMeta find_model(const ModelCatalog& catalog, std::string_view model) {
  for (const auto& m : catalog.models)
    if (m.id == model) return m;
  for (const auto& m : catalog.models)
    if (m.upstream && *m.upstream == model) return m;
  return builtin_meta(model);
}

ModelSpec spec_of(const ModelCatalog& catalog, std::string_view model, WireApi wire, std::optional<std::string> fallback) {
  ModelSpec spec;
  spec.meta = find_model(catalog, model);
  bool listed = std::any_of(catalog.models.begin(), catalog.models.end(),
                            [&](const ModelMeta& m) { return m.id == spec.meta.id; });
  spec.source = listed ? catalog.source : "builtin";
  spec.meta.id = std::string(model);  // found by its upstream name: the name rules see the one asked for
  spec.wire = wire;
  if (wire == WireApi::automatic) {
    spec.wire = fallback ? WireApi::chat : WireApi::responses;
    spec.wire_note = std::move(fallback);
  }
  return spec;
}

std::optional<int64_t> window_of(const ModelSpec& spec, std::optional<int64_t> configured) {
  if (configured && *configured > 0) return configured;
  return spec.meta.context_window;
}

bool wants_cache_markers(const ModelSpec& spec, const ModelProviderInfo& provider) {
  if (provider.prompt_cache) return *provider.prompt_cache;
  const auto& m = spec.meta;
  auto anthropic = [](const std::optional<std::string>& s) {
    return s && (contains(*s, "claude") || contains(*s, "anthropic"));
  };
  // A Claude always takes them (E6; LiteLLM says `false` for deployments its cost map lacks);
  // another model only when the provider says it caches and it is Anthropic's (OpenAI, DeepSeek
  // and the like cache by themselves, without markers).
  if (contains(m.id, "claude") || (m.upstream && contains(*m.upstream, "claude"))) return true;
  return m.prompt_caching.value_or(false) && (anthropic(m.upstream) || anthropic(m.owner));
}

bool sends_reasoning(const ModelSpec& spec, std::optional<bool> configured) {
  if (configured) return *configured;
  if (spec.meta.reasoning) return *spec.meta.reasoning;
  return find_family(spec.meta.id).supports_reasoning_summaries;
}

std::optional<std::string> image_refusal(const ModelSpec& spec, size_t images) {
  if (images == 0 || !spec.meta.vision || *spec.meta.vision) return std::nullopt;
  return fmt::format(
      "The model `{}` does not accept images (its provider lists no vision support for it). Remove the image{} or "
      "pick a model that supports vision (`llmx models` lists them).",
      spec.meta.id, images == 1 ? "" : "s");
}

std::optional<std::string> responses_refusal(long status, std::string_view body) {
  auto snippet = std::string(body.substr(0, 200));
  while (!snippet.empty() && (snippet.back() == '\n' || snippet.back() == '\r')) snippet.pop_back();
  if (status == 404 || status == 405 || status == 501) {
    // A model the server does not have is not a missing API: Chat would say the same.
    if (contains(body, "model_not_found") || contains(body, "does not exist") ||
        (contains(body, "model") && contains(body, "not found") && !contains(body, "\"detail\":\"not found\"")))
      return std::nullopt;
    return fmt::format("the provider answered HTTP {} to a Responses request{}{}", status,
                       snippet.empty() ? "" : ": ", snippet);
  }
  if (status != 400 && status != 422) return std::nullopt;
  // Responses-only fields a Chat-only backend rejects, in the words LiteLLM, Azure, vLLM and
  // Anthropic use for them.
  static constexpr std::string_view kSigns[] = {
      "prompt_cache_key", "extra inputs are not permitted", "unrecognized request argument",
      "does not support parameters", "responses api is not supported", "operationnotsupported",
  };
  bool refused = std::any_of(std::begin(kSigns), std::end(kSigns), [&](auto sign) { return contains(body, sign); });
  // "Unsupported parameter" alone is also how a Responses server refuses a setting one model
  // lacks (`temperature`); only a Responses-only field makes it a missing API.
  refused |= contains(body, "unsupported parameter") && contains(body, "prompt_cache");
  if (refused) return fmt::format("the provider refused a Responses request (HTTP {}): {}", status, snippet);
  return std::nullopt;
}

std::vector<ModelPreset> catalog_presets(const ModelCatalog& catalog, const std::string& configured_model) {
  if (catalog.source != "provider") {
    auto out = available_models(configured_model);
    for (auto& p : out) annotate(p, find_model(catalog, p.model));
    return out;
  }
  std::vector<ModelPreset> out;
  for (const auto& m : catalog.models) {
    ModelPreset p;
    p.id = p.model = p.display_name = m.id;
    p.description = describe(m);
    p.supported_reasoning_efforts = efforts_for(m);
    p.is_default = m.id == configured_model;
    annotate(p, m);
    out.push_back(std::move(p));
  }
  bool listed = std::any_of(out.begin(), out.end(), [&](const ModelPreset& p) { return p.is_default; });
  if (!configured_model.empty() && !listed) {
    auto m = find_model(catalog, configured_model);
    ModelPreset p;
    p.id = p.model = p.display_name = configured_model;
    p.description = fmt::format("{} (the provider does not list it)", kConfiguredModelDescription);
    p.supported_reasoning_efforts = efforts_for(m);
    p.is_default = true;
    annotate(p, m);
    out.insert(out.begin(), std::move(p));
  }
  return out;
}

}  // namespace llmx::models
