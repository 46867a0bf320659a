// What a provider serves, as plain code (issue 19): reading /models and LiteLLM's /model/info,
// the catalogue a fetch makes, the facts a task takes from it, and the Responses refusals that
// make an `auto` provider fall back to Chat.
#include <doctest/doctest.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/model/chat_request.hpp"
#include "protocol/model/environment_context.hpp"
#include "protocol/model/provider_models.hpp"
#include "protocol/model/responses_request.hpp"

using namespace llmx;
using namespace llmx::models;

namespace {

const char* kList =
    R"({"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"openai"},{"id":"claude-sonnet"},)"
    R"({"id":"anthropic/*"},{"id":"gpt-4o"},{"id":"text-embedding-3"},{"id":""},7]})";

const char* kInfo = R"({"data":[
  {"model_name":"gpt-4o","litellm_params":{"model":"openai/gpt-4o"},
   "model_info":{"max_tokens":16384,"max_input_tokens":128000,"max_output_tokens":16384,"litellm_provider":"openai",
                 "mode":"chat","supports_function_calling":true,"supports_vision":true,"supports_reasoning":null,
                 "supports_prompt_caching":true}},
  {"model_name":"gpt-4o","litellm_params":{"model":"azure/gpt-4o"},
   "model_info":{"max_input_tokens":64000,"max_output_tokens":4096,"litellm_provider":"azure","supports_reasoning":false}},
  {"model_name":"claude-sonnet","litellm_params":{"model":"anthropic/claude-sonnet-4-5"},
   "model_info":{"max_tokens":64000.0,"max_input_tokens":200000.0,"litellm_provider":"anthropic","mode":"chat",
                 "supports_vision":true,"supports_reasoning":true,"supports_prompt_caching":true}},
  {"model_name":"text-embedding-3","litellm_params":{"model":"openai/text-embedding-3-small"},
   "model_info":{"max_input_tokens":8191,"mode":"embedding"}},
  {"model_name":"local-llama","litellm_params":{"model":"openai/llama"},"model_info":{"id":"x","db_model":true}},
  {"model_name":"anthropic/*","litellm_params":{"model":"anthropic/*"},"model_info":{}}
]})";

const ModelMeta* find(const std::vector<ModelMeta>& ms, std::string_view id) {
  for (const auto& m : ms)
    if (m.id == id) return &m;
  return nullptr;
}

ModelSpec spec(ModelMeta m) {
  ModelSpec s;
  s.meta = std::move(m);
  return s;
}

}  // namespace

TEST_CASE("provider models: /models ids in order, without wildcards, duplicates, blanks or non-objects") {
  auto ms = parse_model_list(kList);
  REQUIRE(ms.size() == 3);
  CHECK(ms[0].id == "gpt-4o");
  CHECK(ms[0].owner == std::optional<std::string>("openai"));
  CHECK(ms[1].id == "claude-sonnet");
  CHECK(ms[2].id == "text-embedding-3");
  CHECK_THROWS_AS(parse_model_list("[1,2]"), json::DecodeError);
  CHECK_THROWS_AS(parse_model_list(R"({"models":[]})"), json::DecodeError);
  CHECK_THROWS_AS(parse_model_list("<html>"), json::DecodeError);
}

TEST_CASE("provider models: LiteLLM's /model/info details, every deployment of a name limiting it") {
  auto ms = parse_model_list(kList);
  apply_model_info(ms, kInfo);
  const auto* gpt = find(ms, "gpt-4o");
  REQUIRE(gpt);
  CHECK(gpt->upstream == std::optional<std::string>("openai/gpt-4o"));
  CHECK(gpt->owner == std::optional<std::string>("openai"));
  // A request may land on either deployment: the smaller limits, what both can do.
  CHECK(gpt->context_window == std::optional<int64_t>(64000));
  CHECK(gpt->max_output_tokens == std::optional<int64_t>(4096));
  CHECK(gpt->tools == std::optional<bool>(true));
  CHECK(gpt->vision == std::optional<bool>(true));      // unknown in the second
  CHECK(gpt->reasoning == std::optional<bool>(false));  // null in the first, false in the second
  CHECK(gpt->prompt_caching == std::optional<bool>(true));
  const auto* claude = find(ms, "claude-sonnet");
  REQUIRE(claude);
  CHECK(claude->context_window == std::optional<int64_t>(200000));  // floats read as counts
  CHECK(claude->max_output_tokens == std::optional<int64_t>(64000));  // legacy max_tokens: the output limit
  CHECK(claude->owner == std::optional<std::string>("anthropic"));
  // An embedding model is no use to an agent; a deployment /models did not list is added, with
  // what its config says (nothing here).
  CHECK_FALSE(find(ms, "text-embedding-3"));
  const auto* llama = find(ms, "local-llama");
  REQUIRE(llama);
  CHECK_FALSE(llama->context_window);
  CHECK_FALSE(llama->vision);
  CHECK_FALSE(find(ms, "anthropic/*"));
  CHECK_THROWS_AS(apply_model_info(ms, R"({"data":[{"model_name":"x","model_info":)"), json::DecodeError);
}

TEST_CASE("provider models: a fetch's catalogue, from both answers, one of them, or neither") {
  FetchResult list{200, kList, {}};
  FetchResult info{200, kInfo, {}};
  auto live = catalog_from(list, info, nullptr, 42);
  CHECK(live.source == "provider");
  CHECK(live.fetched_at_ms == 42);
  CHECK_FALSE(live.note);
  CHECK(find(live.models, "claude-sonnet")->vision == std::optional<bool>(true));
  // Not LiteLLM (/model/info is 404): the list, quietly; the table fills what it knows.
  auto plain = catalog_from(list, FetchResult{404, R"({"detail":"Not Found"})", {}}, nullptr, 1);
  CHECK(plain.source == "provider");
  CHECK_FALSE(plain.note);
  CHECK(find(plain.models, "gpt-4o")->context_window == std::optional<int64_t>(128000));  // the built-in table
  CHECK_FALSE(find(plain.models, "text-embedding-3"));  // without LiteLLM's modes, by its name
  // /model/info unreadable: the list, with a note saying so.
  auto broken = catalog_from(list, FetchResult{200, "{not json", {}}, nullptr, 1);
  CHECK(broken.source == "provider");
  REQUIRE(broken.note);
  CHECK(broken.note->find("/model/info") != std::string::npos);
  auto failing = catalog_from(list, FetchResult{500, "boom", {}}, nullptr, 1);
  REQUIRE(failing.note);
  CHECK(failing.note->find("HTTP 500") != std::string::npos);
  // /models missing but /model/info there (a LiteLLM that hides /models): its deployments.
  auto info_only = catalog_from(FetchResult{404, "", {}}, info, nullptr, 1);
  CHECK(info_only.source == "provider");
  CHECK(find(info_only.models, "gpt-4o"));
  // Neither: the built-in presets, with the reason.
  auto down = catalog_from(FetchResult{0, "", "Failed to connect (curl 7)"}, FetchResult{0, "", "Failed"}, nullptr, 1);
  CHECK(down.source == "builtin");
  REQUIRE(down.note);
  CHECK(down.note->find("curl 7") != std::string::npos);
  CHECK(find(down.models, "gpt-5-llmx"));
  // A refresh that fails keeps the earlier live list, saying so.
  auto kept = catalog_from(FetchResult{502, "bad gateway", {}}, std::nullopt, &live, 99);
  CHECK(kept.source == "provider");
  CHECK(kept.fetched_at_ms == 42);
  REQUIRE(kept.note);
  CHECK(kept.note->find("last refresh failed") != std::string::npos);
}

TEST_CASE("provider models: a task's spec: the entry, its upstream name, else the table, and the wire") {
  auto c = catalog_from(FetchResult{200, kList, {}}, FetchResult{200, kInfo, {}}, nullptr, 1);
  auto s = spec_of(c, "claude-sonnet", WireApi::automatic);
  CHECK(s.source == "provider");
  CHECK(s.wire == WireApi::responses);
  CHECK_FALSE(s.wire_note);
  auto upstream = spec_of(c, "anthropic/claude-sonnet-4-5", WireApi::chat);
  CHECK(upstream.source == "provider");  // the alias's entry, under the name asked for
  CHECK(upstream.meta.id == "anthropic/claude-sonnet-4-5");
  CHECK(upstream.meta.context_window == std::optional<int64_t>(200000));
  auto fallen = spec_of(c, "gpt-4o", WireApi::automatic, std::string("HTTP 404"));
  CHECK(fallen.wire == WireApi::chat);
  CHECK(fallen.wire_note == std::optional<std::string>("HTTP 404"));
  CHECK(spec_of(c, "gpt-4o", WireApi::responses, std::string("ignored")).wire == WireApi::responses);
  auto unknown = spec_of(c, "openai/gpt-4.1", WireApi::chat);
  CHECK(unknown.source == "builtin");
  CHECK(unknown.meta.context_window == std::optional<int64_t>(1047576));  // the table, behind a prefix
  CHECK(window_of(unknown, 5000) == std::optional<int64_t>(5000));        // the config wins
  CHECK(window_of(unknown, std::nullopt) == std::optional<int64_t>(1047576));
  CHECK_FALSE(window_of(spec_of({}, "mystery", WireApi::chat), std::nullopt));
}

TEST_CASE("provider models: cache markers only for caching Anthropic models, reasoning and images as said") {
  ModelProviderInfo p;
  ModelMeta claude{"claude-x", std::string("anthropic/claude-x"), std::string("anthropic"), {}, {}, {}, {}, {}, true};
  ModelMeta gpt{"gpt-4o", std::string("openai/gpt-4o"), std::string("openai"), {}, {}, {}, {}, {}, true};
  ModelMeta no_cache{"my-claude", {}, {}, {}, {}, {}, {}, {}, false};
  ModelMeta unknown{"my-claude", {}, {}, {}, {}, {}, {}, {}, {}};
  ModelMeta routed{"sonnet", std::string("bedrock/anthropic.claude-3"), std::string("bedrock"), {}, {}, {}, {}, {}, true};
  CHECK(wants_cache_markers(spec(claude), p));
  CHECK(wants_cache_markers(spec(routed), p));       // Claude behind Bedrock, by its upstream name
  CHECK_FALSE(wants_cache_markers(spec(gpt), p));    // OpenAI caches by itself
  CHECK(wants_cache_markers(spec(no_cache), p));     // a Claude always (LiteLLM's `false` may mean unmapped)
  CHECK(wants_cache_markers(spec(unknown), p));      // unknown: the name rule (E6)
  ModelMeta alias{"sonnet", std::string("anthropic/claude-3-7"), {}, {}, {}, {}, {}, {}, {}};
  CHECK(wants_cache_markers(spec(alias), p));        // an alias of a Claude
  ModelMeta gemini{"gemini", std::string("gemini/gemini-2.5"), std::string("gemini"), {}, {}, {}, {}, {}, true};
  CHECK_FALSE(wants_cache_markers(spec(gemini), p));
  p.prompt_cache = false;
  CHECK_FALSE(wants_cache_markers(spec(claude), p));  // the provider's flag wins
  p.prompt_cache = true;
  CHECK(wants_cache_markers(spec(gpt), p));

  ModelMeta reasoner{"r1"};
  reasoner.reasoning = true;
  ModelMeta plain{"gpt-5"};  // the table's gpt-5 reasons
  plain.reasoning = false;   // but the provider says this one does not
  CHECK(sends_reasoning(spec(reasoner), std::nullopt));
  CHECK_FALSE(sends_reasoning(spec(plain), std::nullopt));
  CHECK(sends_reasoning(spec(plain), true));  // model_supports_reasoning_summaries wins
  CHECK(sends_reasoning(spec(ModelMeta{"gpt-5"}), std::nullopt));  // unknown: the family

  ModelMeta blind{"text-only"};
  blind.vision = false;
  CHECK_FALSE(image_refusal(spec(blind), 0));
  auto refusal = image_refusal(spec(blind), 2);
  REQUIRE(refusal);
  CHECK(refusal->find("`text-only` does not accept images") != std::string::npos);
  CHECK_FALSE(image_refusal(spec(ModelMeta{"unknown"}), 1));  // unknown: sent as before
}

TEST_CASE("provider models: which answers mean a provider does not serve Responses") {
  CHECK(responses_refusal(404, R"({"detail":"Not Found"})"));
  CHECK(responses_refusal(404, "404 page not found"));
  CHECK(responses_refusal(405, R"({"detail":"Method Not Allowed"})"));
  CHECK(responses_refusal(400, R"({"error":{"message":"prompt_cache_key: Extra inputs are not permitted"}})"));
  CHECK(responses_refusal(400, "Unrecognized request argument supplied: prompt_cache_key"));
  CHECK(responses_refusal(422, R"({"detail":"Unsupported parameter: prompt_cache_retention"})"));
  CHECK_FALSE(responses_refusal(404, R"({"error":{"code":"model_not_found","message":"The model `x` does not exist"}})"));
  CHECK_FALSE(responses_refusal(400, R"({"error":{"message":"This model's maximum context length is 8192 tokens"}})"));
  CHECK_FALSE(responses_refusal(401, "Unauthorized"));
  CHECK_FALSE(responses_refusal(500, "prompt_cache_key"));
  CHECK(responses_refusal(400, R"({"error":{"code":"OperationNotSupported","message":"The responses operation does not work"}})"));
  CHECK_FALSE(responses_refusal(404, R"({"error":"model 'gpt-5.5' not found"})"));  // Ollama: a model, not the API
  CHECK_FALSE(responses_refusal(400, R"({"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model."}})"));
  CHECK_FALSE(responses_refusal(400, R"({"path":"/v1/responses","error":"input too long"})"));
  CHECK_FALSE(responses_refusal(429, "Unsupported parameter"));
}

TEST_CASE("provider models: model/list entries from a live catalogue, the configured model first when unlisted") {
  auto c = catalog_from(FetchResult{200, kList, {}}, FetchResult{200, kInfo, {}}, nullptr, 1);
  auto ps = catalog_presets(c, "gpt-4o");
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].id == "gpt-4o");
  CHECK(ps[0].is_default);
  CHECK(ps[0].context_window == std::optional<int64_t>(64000));
  CHECK(ps[0].input_modalities == std::optional<std::vector<std::string>>({"text", "image"}));
  CHECK(ps[0].supported_reasoning_efforts.empty());  // the provider says it does not reason
  CHECK(ps[0].description.find("64K context") != std::string::npos);
  CHECK(ps[1].id == "claude-sonnet");
  CHECK(ps[1].supported_reasoning_efforts.size() == 4);
  CHECK(ps[1].supports_prompt_caching == std::optional<bool>(true));
  CHECK_FALSE(ps[2].input_modalities);  // local-llama: unknown
  auto mine = catalog_presets(c, "my/own-model");
  REQUIRE(mine.size() == 4);
  CHECK(mine[0].id == "my/own-model");
  CHECK(mine[0].is_default);
  CHECK(mine[0].description.find("does not list it") != std::string::npos);
  CHECK(std::count_if(mine.begin(), mine.end(), [](const ModelPreset& p) { return p.is_default; }) == 1);
  // The table: the presets as before, with what the table knows.
  auto table = catalog_presets(builtin_catalog("down"), "gpt-5");
  CHECK(table[0].id == "gpt-5-llmx");
  CHECK(table[0].context_window == std::optional<int64_t>(272000));
  CHECK(table[1].is_default);
  auto page = page_of(catalog_presets(c, "gpt-4o"), std::string("1"), 1);
  REQUIRE(page.items.size() == 1);
  CHECK(page.items[0].id == "claude-sonnet");
  CHECK(page.next_cursor == std::optional<std::string>("2"));
}

TEST_CASE("provider models: requests keep within the model's output limit, effort and markers as the spec says") {
  Config cfg;
  cfg.model = "claude-x";
  cfg.reasoning_effort = "high";
  ModelMeta m{"claude-x"};
  m.max_output_tokens = 4096;
  m.reasoning = true;
  m.prompt_caching = false;
  auto prompt = base_prompt(cfg, "conv", spec(m));
  prompt.input.push_back(ResponseItem{MessageItem{"user", {ContentItem{InputText{"hi"}}}}});
  ModelProviderInfo p;
  auto chat = build_chat_request(prompt, p);
  CHECK(chat.find(R"("max_tokens":4096)") != std::string::npos);  // not the default 20480
  CHECK(chat.find(R"("reasoning_effort":"high")") != std::string::npos);
  CHECK(chat.find("cache_control") != std::string::npos);  // a Claude keeps them, whatever LiteLLM's flag
  p.max_tokens = 1000;
  CHECK(build_chat_request(prompt, p).find(R"("max_tokens":1000)") != std::string::npos);
  p.max_tokens = 100000;
  CHECK(build_responses_request(prompt, p).find(R"("max_output_tokens":4096)") != std::string::npos);
  // A model the provider says does not reason gets no effort, whatever the config says.
  m.reasoning = false;
  auto quiet = base_prompt(cfg, "conv", spec(m));
  quiet.input = prompt.input;
  CHECK(build_chat_request(quiet, ModelProviderInfo{}).find("reasoning_effort") == std::string::npos);
  CHECK(build_responses_request(quiet, ModelProviderInfo{}).find(R"("reasoning":null)") != std::string::npos);
  // Unknown to the provider: the name rule still marks a Claude, and nothing caps the output.
  auto table = base_prompt(cfg, "conv", spec_of({}, "claude-x", WireApi::chat));
  table.input = prompt.input;
  auto body = build_chat_request(table, ModelProviderInfo{});
  CHECK(body.find("cache_control") != std::string::npos);
  CHECK(body.find(R"("max_tokens":20480)") != std::string::npos);
  CHECK(body.find("reasoning_effort") == std::string::npos);
}

TEST_CASE("provider models: the llmx models --json report") {
  auto c = catalog_from(FetchResult{200, kList, {}}, FetchResult{200, kInfo, {}}, nullptr, 1);
  ModelProviderInfo p;
  p.id = "litellm";
  p.base_url = "http://proxy/v1";
  auto text = catalog_report_json(c, p, "claude-sonnet");
  json::Parser parser;
  json::Object o = parser.parse(text).get_object().value_unsafe();
  CHECK(json::get_string(o, "provider") == std::optional<std::string_view>("litellm"));
  CHECK(json::get_string(o, "source") == std::optional<std::string_view>("provider"));
  CHECK_FALSE(json::get(o, "note"));
  CHECK(text.find(R"("id":"claude-sonnet","upstream":"anthropic/claude-sonnet-4-5")") != std::string::npos);
  CHECK(text.find(R"("configured":true)") != std::string::npos);
  auto down = catalog_report_json(builtin_catalog("proxy down"), p, "x");
  CHECK(down.find(R"("source":"builtin","note":"proxy down")") != std::string::npos);
}
