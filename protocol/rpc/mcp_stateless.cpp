#include "protocol/rpc/mcp_stateless.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "protocol/base/base64.hpp"
#include "protocol/base/crypto.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_tasks.hpp"

namespace llmx::mcp {

namespace {

// Every version we speak: 2026-07-28 per request, the others through initialize.
constexpr std::array<std::string_view, 5> kSupported = {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26",
                                                        "2024-11-05"};

std::optional<json::Object> meta_of(const std::optional<json::Element>& params) {
  if (!params || !params->is_object()) return std::nullopt;
  auto meta = json::get(params->get_object().value_unsafe(), "_meta");
  if (!meta || !meta->is_object()) return std::nullopt;
  return meta->get_object().value_unsafe();
}

rpc::RpcError invalid(std::string what) { return {rpc::kInvalidParams, "Invalid params: " + what}; }

void supported_versions(json::Writer& w) {
  w.begin_array();
  for (auto v : kSupported) w.string(v);
  w.end_array();
}

void server_capabilities(json::Writer& w) {
  w.begin_object();
  w.key("tools").begin_object().field("listChanged", false).end_object();
  w.key("extensions").begin_object().key(kTasksExtension).begin_object().end_object().end_object();
  w.end_object();
}

void cacheable(json::Writer& w, int64_t ttl_ms) { w.field("ttlMs", ttl_ms).field("cacheScope", "public"); }

}  // namespace

bool is_stateless_request(const std::optional<json::Element>& params) {
  auto meta = meta_of(params);
  return meta && json::get(*meta, kVersionKey).has_value();
}

std::variant<RequestMeta, rpc::RpcError> read_request_meta(const std::optional<json::Element>& params) {
  auto meta = meta_of(params);
  if (!meta) return invalid("`_meta` is required");
  auto version = json::get(*meta, kVersionKey);
  if (!version || !version->is_string()) return invalid(fmt::format("`_meta.{}` must be a string", kVersionKey));
  RequestMeta out;
  out.protocol_version = std::string(version->get_string().value_unsafe());
  if (out.protocol_version != kStatelessVersion) {
    json::Writer w;
    w.begin_object().key("supported");
    supported_versions(w);
    w.field("requested", out.protocol_version).end_object();
    return rpc::RpcError{kUnsupportedProtocolVersion,
                         fmt::format("Unsupported protocol version: {} (without initialize this server speaks {}; "
                                     "2025 versions start with initialize)",
                                     out.protocol_version, kStatelessVersion),
                         w.take()};
  }
  auto caps = json::get(*meta, kCapabilitiesKey);
  if (!caps || !caps->is_object()) return invalid(fmt::format("`_meta.{}` is required (an object)", kCapabilitiesKey));
  out.capabilities = read_client_capabilities(RawJson{json::to_text(*caps)});
  if (auto ext = json::object_if(caps->get_object().value_unsafe(), "extensions"))
    out.tasks_extension = json::object_if(*ext, kTasksExtension).has_value();
  return out;
}

rpc::RpcError missing_capability(std::string message, std::string required) {
  return {kMissingRequiredClientCapability, std::move(message), "{\"requiredCapabilities\":" + required + "}"};
}

std::string discover_result() {
  json::Writer w;
  w.begin_object();
  w.key("supportedVersions");
  supported_versions(w);
  w.key("capabilities");
  server_capabilities(w);
  w.field("instructions", server_instructions());
  cacheable(w, 3600000);
  w.end_object();
  return stateless_result(w.take());
}

std::string stateless_tools_list() {
  std::string tools = json::to_json(ToolsListResult{});
  json::Writer w;
  w.begin_object();
  cacheable(w, 3600000);
  w.end_object();
  // {"tools":[...]} + the cache hints.
  std::string hints = w.take();
  tools.pop_back();
  tools += "," + hints.substr(1);
  return stateless_result(tools);
}

std::string input_required_result(const std::vector<std::pair<std::string, std::string>>& questions,
                                  const std::string& request_state) {
  json::Writer w;
  w.begin_object().field("resultType", "input_required");
  w.key("inputRequests").begin_object();
  for (const auto& [key, params] : questions)
    w.key(key).begin_object().field("method", "elicitation/create").key("params").raw(params).end_object();
  w.end_object();
  w.field("requestState", request_state);
  w.end_object();
  return stateless_result(w.take());
}

RequestStateSeal::RequestStateSeal() : key_(32, '\0') { crypto::random_bytes(key_.data(), key_.size()); }

std::string RequestStateSeal::mac(std::string_view payload) const { return crypto::hmac_sha256(key_, payload); }

std::string RequestStateSeal::seal(const RequestState& s) const {
  json::Writer w;
  w.begin_object().field("t", s.task_id).field("o", s.owner).field("d", s.call_digest).field("e", s.expires_ms);
  w.key("k").begin_array();
  for (const auto& k : s.keys) w.string(k);
  w.end_array().end_object();
  auto payload = base64::encode(w.take());
  return payload + "." + base64::encode(mac(payload));
}

std::optional<RequestState> RequestStateSeal::open(std::string_view token) const {
  auto dot = token.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto payload = token.substr(0, dot);
  auto given = base64::decode(token.substr(dot + 1));
  auto expected = mac(payload);
  if (!given || !crypto::equal_constant_time(*given, expected)) return std::nullopt;
  auto text = base64::decode(payload);
  if (!text) return std::nullopt;
  try {
    json::Parser parser;
    auto root = parser.parse(*text);
    if (!root.is_object()) return std::nullopt;
    auto o = root.get_object().value_unsafe();
    RequestState s;
    s.task_id = std::string(json::get_string(o, "t").value_or(""));
    s.owner = std::string(json::get_string(o, "o").value_or(""));
    s.call_digest = std::string(json::get_string(o, "d").value_or(""));
    s.expires_ms = json::get_int(o, "e").value_or(0);
    if (auto keys = json::get(o, "k"); keys && keys->is_array()) {
      json::Array list = keys->get_array().value_unsafe();  // named: no reference into a temporary
      for (auto k : list)
        if (k.is_string()) s.keys.emplace_back(k.get_string().value_unsafe());
    }
    return s;
  } catch (const json::DecodeError&) {
    return std::nullopt;
  }
}

std::string call_digest(std::string_view tool, std::string_view arguments_json) {
  return crypto::sha256_hex(std::string(tool) + '\n' + std::string(arguments_json));
}

}  // namespace llmx::mcp
