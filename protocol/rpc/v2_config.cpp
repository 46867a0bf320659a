#include "protocol/rpc/v2_config.hpp"

#include <map>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/base/crypto.hpp"

namespace llmx::v2 {

namespace {

// The keys a v2 client reads by name: always present, null when no layer sets them.
constexpr std::string_view kTypedKeys[] = {
    "model", "review_model", "model_context_window", "model_auto_compact_token_limit", "model_provider",
    "approval_policy", "sandbox_mode", "sandbox_workspace_write", "forced_chatgpt_workspace_id",
    "forced_login_method", "tools", "profile", "profiles", "instructions", "developer_instructions",
    "compact_prompt", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity"};

void leaves(json::Element e, const std::string& path, std::vector<std::string>& out) {
  if (e.is_object()) {
    json::Object o = e.get_object().value_unsafe();
    for (auto [k, v] : o) leaves(v, path.empty() ? std::string(k) : path + "." + std::string(k), out);
  } else if (e.is_array()) {
    json::Array a = e.get_array().value_unsafe();
    size_t i = 0;
    for (auto v : a) leaves(v, path + "." + std::to_string(i++), out);
  } else if (!path.empty()) {
    out.push_back(path);
  }
}

std::vector<std::string> leaves_of(const std::string& text) {
  json::Parser p;
  std::vector<std::string> out;
  leaves(p.parse(text), "", out);
  return out;
}

}  // namespace

ConfigReadResult config_read(const ConfigLayersJson& layers, bool include_layers) {
  json::Writer user_name;
  user_name.begin_object().field("type", "user").field("file", layers.user_file).end_object();
  const std::string user_source = user_name.take();
  const std::string flags_source = R"({"type":"sessionFlags"})";
  const std::string user_version = "sha256:" + crypto::sha256_hex(layers.user);
  const std::string flags_version = "sha256:" + crypto::sha256_hex(layers.flags);
  auto meta = [](const std::string& name, const std::string& version) {
    json::Writer w;
    w.begin_object().key("name").raw(name).field("version", version).end_object();
    return w.take();
  };

  ConfigReadResult r;
  {
    json::Parser p;
    json::Object merged = p.parse(layers.merged).get_object().value_unsafe();
    json::Writer w;
    w.begin_object();
    std::map<std::string, bool> seen;
    for (auto [k, v] : merged) {
      w.key(k).raw(json::to_text(v));
      seen[std::string(k)] = true;
    }
    for (auto k : kTypedKeys)
      if (!seen.count(std::string(k))) w.key(k).null();
    w.end_object();
    r.config = RawJson{w.take()};
  }
  {
    auto from_flags = leaves_of(layers.flags);
    std::map<std::string, bool> flagged;
    for (auto& l : from_flags) flagged[l] = true;
    const auto user_meta = meta(user_source, user_version), flags_meta = meta(flags_source, flags_version);
    json::Writer w;
    w.begin_object();
    for (const auto& leaf : leaves_of(layers.merged)) w.key(leaf).raw(flagged.count(leaf) ? flags_meta : user_meta);
    w.end_object();
    r.origins = RawJson{w.take()};
  }
  if (include_layers) {
    r.layers.emplace();
    if (layers.flags != "{}") r.layers->push_back(ConfigLayer{RawJson{flags_source}, flags_version, RawJson{layers.flags}});
    r.layers->push_back(ConfigLayer{RawJson{user_source}, user_version, RawJson{layers.user}});
  }
  return r;
}

}  // namespace llmx::v2
