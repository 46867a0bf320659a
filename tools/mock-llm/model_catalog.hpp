// The models mock-llm says it serves, like a LiteLLM proxy: `GET /v1/models` (the OpenAI list)
// and `GET /model/info` (LiteLLM's deployments with their limits and capabilities). The built-in
// set covers what the engine decides from metadata (a tiny window, vision, reasoning, caching,
// an embedding model); `--models FILE` replaces it with a /model/info document.
#pragma once

#include <string>

namespace mockllm {

// How /model/info answers (`--model-info`): the catalogue, a body that is not JSON, 404 (a
// proxy that is not LiteLLM).
enum class ModelInfoMode { Ok, Malformed, Missing };

struct ModelCatalog {
  std::string info_json;  // the /model/info document
  std::string list_json;  // the /v1/models document made from it
};

// The built-in catalogue.
ModelCatalog builtin_model_catalog();

// A catalogue from a /model/info document; false (with `error`) when it is not one.
bool load_model_catalog(const std::string &info_json, ModelCatalog &out, std::string &error);

}  // namespace mockllm
