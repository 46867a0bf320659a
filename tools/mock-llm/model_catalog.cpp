#include "tools/mock-llm/model_catalog.hpp"

#include <simdjson.h>

#include <fmt/core.h>

#include "tools/mock-llm/text_util.hpp"

namespace mockllm {

namespace {

// One LiteLLM deployment; `null` where LiteLLM would not know.
std::string deployment(const char *name, const char *upstream, const char *provider, const char *mode,
                       const char *max_input, const char *max_output, const char *tools, const char *vision,
                       const char *reasoning, const char *caching) {
  return fmt::format(
      R"({{"model_name":"{}","litellm_params":{{"model":"{}","use_in_pass_through":false}},)"
      R"("model_info":{{"id":"mock-{}","db_model":false,"key":"{}","max_tokens":{},"max_input_tokens":{},)"
      R"("max_output_tokens":{},"input_cost_per_token":1e-06,"output_cost_per_token":2e-06,)"
      R"("litellm_provider":"{}","mode":"{}","supports_function_calling":{},"supports_vision":{},)"
      R"("supports_reasoning":{},"supports_prompt_caching":{},"supports_tool_choice":true}}}})",
      name, upstream, name, upstream, max_output, max_input, max_output, provider, mode, tools, vision, reasoning,
      caching);
}

}  // namespace

ModelCatalog builtin_model_catalog() {
  std::string info = R"({"data":[)";
  info += deployment("mock-model", "openai/mock-model", "openai", "chat", "128000", "16384", "true", "false",
                     "false", "false");
  info += "," + deployment("mock-vision", "openai/mock-vision", "openai", "chat", "128000", "8192", "true", "true",
                           "false", "false");
  info += "," + deployment("mock-reasoner", "openai/mock-reasoner", "openai", "chat", "200000", "64000", "true",
                           "false", "true", "false");
  info += "," + deployment("claude-mock", "anthropic/claude-mock", "anthropic", "chat", "200000", "8192", "true",
                           "true", "true", "true");
  info += "," + deployment("mock-tiny", "openai/mock-tiny", "openai", "chat", "100000", "512", "true", "false",
                           "false", "false");
  info += "," + deployment("text-embedding-mock", "openai/text-embedding-mock", "openai", "embedding", "8191",
                           "null", "null", "null", "null", "null");
  // A second deployment of a name (LiteLLM load balancing) and a wildcard route.
  info += "," + deployment("mock-model", "azure/mock-model", "azure", "chat", "64000", "4096", "true", "false",
                           "false", "false");
  info += R"(,{"model_name":"anthropic/*","litellm_params":{"model":"anthropic/*"},"model_info":{"id":"wild","db_model":false}})";
  info += "]}";
  ModelCatalog c;
  std::string error;
  load_model_catalog(info, c, error);
  return c;
}

bool load_model_catalog(const std::string &info_json, ModelCatalog &out, std::string &error) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(info_json).get(root)) {
    error = simdjson::error_message(err);
    return false;
  }
  simdjson::dom::array data;
  if (root["data"].get(data)) {
    error = "no `data` array";
    return false;
  }
  std::string list = R"({"object":"list","data":[)";
  std::string seen = "\n";
  bool first = true;
  for (auto entry : data) {
    std::string_view name;
    if (entry["model_name"].get(name)) continue;
    if (seen.find("\n" + std::string(name) + "\n") != std::string::npos) continue;  // one row per model group
    seen += std::string(name) + "\n";
    if (!first) list += ',';
    first = false;
    list += R"({"id":)";
    append_json_string(list, std::string(name));
    list += R"(,"object":"model","created":1677610602,"owned_by":"openai"})";
  }
  list += "]}";
  out.info_json = info_json;
  out.list_json = std::move(list);
  return true;
}

}  // namespace mockllm
