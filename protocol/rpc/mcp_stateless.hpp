// MCP 2026-07-28, stateless (issue 16 point 3): no handshake — each request carries its protocol
// version and the client's capabilities in `_meta`, every result says its `resultType` and our
// serverInfo, lists say how long they stay fresh, and a call that needs the user answers
// `input_required` with an integrity-protected `requestState` instead of asking. Plain code: the
// session's stateless methods (actors/mcp_stateless_methods.cpp) use it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/method_table.hpp"
#include "protocol/rpc/mcp.hpp"

namespace llmx::mcp {

inline constexpr std::string_view kStatelessVersion = "2026-07-28";
inline constexpr std::string_view kVersionKey = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";

// Error codes of 2026-07-28.
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// What one stateless request says about its client.
struct RequestMeta {
  std::string protocol_version;
  ClientCapabilities capabilities;
  bool tasks_extension = false;  // capabilities.extensions["io.modelcontextprotocol/tasks"]
};

// Whether a request is a 2026-07-28 one: its params' `_meta` names a protocol version.
bool is_stateless_request(const std::optional<json::Element>& params);

// The request's meta, or the error to answer it with (-32602 for a missing or malformed field,
// -32022 with the versions we support for a version we do not serve statelessly).
std::variant<RequestMeta, rpc::RpcError> read_request_meta(const std::optional<json::Element>& params);

// -32021 for a request that needs a capability the client did not declare (`required` is the
// ClientCapabilities object it needs, as JSON).
rpc::RpcError missing_capability(std::string message, std::string required);

// server/discover's result.
std::string discover_result();
// tools/list's result (cacheable: the same for everyone, fresh for an hour).
std::string stateless_tools_list();

// An `input_required` result: the questions (key -> elicitation/create params) and the state
// the client sends back with its answers.
std::string input_required_result(const std::vector<std::pair<std::string, std::string>>& questions,
                                  const std::string& request_state);

// What a requestState holds: the waiting task, who may continue it, which call it belongs to and
// until when. Sealed with HMAC-SHA-256 under a key of this process, so a client can neither forge
// nor alter it (a server restart makes old states invalid: the call starts over).
struct RequestState {
  std::string task_id;
  std::string owner;
  std::string call_digest;  // of the tool name and arguments: the retry must be the same call
  int64_t expires_ms = 0;   // Unix milliseconds
  std::vector<std::string> keys = {};  // the questions this round asked: only their answers count
};

class RequestStateSeal {
 public:
  RequestStateSeal();  // a fresh random key
  std::string seal(const RequestState& state) const;
  // The state, when `token` was sealed by this seal and is well-formed (expiry is the caller's).
  std::optional<RequestState> open(std::string_view token) const;

 private:
  std::string mac(std::string_view payload) const;
  std::string key_;
};

// The digest a requestState binds: SHA-256 of the tool name and its arguments (compact JSON).
std::string call_digest(std::string_view tool, std::string_view arguments_json);

}  // namespace llmx::mcp
