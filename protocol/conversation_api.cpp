#include "protocol/conversation_api.hpp"

#include "protocol/json_reader.hpp"

namespace llmx::api {

std::vector<std::pair<std::string, RawJson>> dotted_overrides(const RawJson& config) {
  std::vector<std::pair<std::string, RawJson>> out;
  if (config.is_null()) return out;
  json::Parser p;
  auto root = p.parse(config.text);
  if (!root.is_object()) throw json::DecodeError("invalid type: expected object", "config");
  for (auto obj = root.get_object().value_unsafe(); auto [k, v] : obj)
    out.emplace_back(std::string(k), RawJson{json::to_text(v)});
  return out;
}

ConfigOverrides NewConversationParams::to_overrides(ConfigOverrides o) const {
  if (model) o.model = *model;
  if (modelProvider) o.model_provider = *modelProvider;
  if (profile) o.profile = *profile;
  if (cwd) o.cwd = *cwd;
  if (approvalPolicy) o.approval_policy = *approvalPolicy;
  if (sandbox) o.sandbox_mode = *sandbox;
  if (baseInstructions) o.base_instructions = *baseInstructions;
  if (developerInstructions) o.developer_instructions = *developerInstructions;
  if (compactPrompt) o.compact_prompt = *compactPrompt;
  if (config) {
    auto more = dotted_overrides(*config);
    o.json_overrides.insert(o.json_overrides.end(), more.begin(), more.end());
  }
  return o;
}

}  // namespace llmx::api
