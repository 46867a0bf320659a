#include "protocol/rpc/handshake.hpp"

#include <utility>

#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/method_table.hpp"
#include "protocol/rpc/mcp_stateless.hpp"

namespace llmx::rpc {

McpHandshake mcp_handshake(const mcp::InitializeParams& p) {
  return McpHandshake{mcp::negotiate_version(p.protocolVersion), p.clientInfo.name + "; " + p.clientInfo.version,
                      mcp::read_client_capabilities(p.capabilities)};
}

mcp::InitializeResult mcp_initialize_result(const McpHandshake& h, bool tasks_offered) {
  return mcp::InitializeResult{h.protocol_version, user_agent(h.client_suffix),
                               tasks_offered && mcp::has_tasks(h.protocol_version)};
}

AppHandshake app_handshake(const v2::InitializeParams& p) {
  return AppHandshake{p.clientInfo.name + "; " + p.clientInfo.version};
}

v2::InitializeResult app_initialize_result(const AppHandshake& h) { return v2::InitializeResult{user_agent(h.client_suffix)}; }

AcpHandshake acp_handshake(const acp::InitializeParams& p) {
  return AcpHandshake{acp::read_client_capabilities(p.clientCapabilities)};
}

namespace {

// `line` when it is an `initialize` request whose params decode as P, the way the method table
// decodes them; `refuse(params)` may turn it away still. nullopt for anything else.
template <class P>
std::optional<std::pair<Id, P>> read_initialize(std::string_view line,
                                                bool (*refuse)(const std::optional<json::Element>&) = nullptr) {
  try {
    json::Parser parser;
    auto in = classify(parser.parse(line), parser.repaired_top_level_id());
    if (in.kind != Incoming::Kind::request || in.method != "initialize") return std::nullopt;
    if (refuse && refuse(in.params)) return std::nullopt;
    return std::pair{in.id, decode_params<P>(in)};
  } catch (const json::DecodeError&) {
    return std::nullopt;  // the session answers it, with the error it deserves
  }
}

}  // namespace

std::optional<EarlyAnswer> answer_mcp_initialize(std::string_view line, bool tasks_offered) {
  // A 2026-07-28 request is served statelessly by the session.
  auto req = read_initialize<mcp::InitializeParams>(line, mcp::is_stateless_request);
  if (!req) return std::nullopt;
  auto h = mcp_handshake(req->second);
  auto reply = Encoder{true}.result(req->first, json::to_json(mcp_initialize_result(h, tasks_offered)));
  return EarlyAnswer{std::move(h), std::move(reply)};
}

std::optional<EarlyAnswer> answer_app_initialize(std::string_view line) {
  auto req = read_initialize<v2::InitializeParams>(line);
  if (!req) return std::nullopt;
  auto h = app_handshake(req->second);
  auto reply = Encoder{false}.result(req->first, json::to_json(app_initialize_result(h)));  // no "jsonrpc"
  return EarlyAnswer{std::move(h), std::move(reply)};
}

std::optional<EarlyAnswer> answer_acp_initialize(std::string_view line) {
  auto req = read_initialize<acp::InitializeParams>(line);
  if (!req) return std::nullopt;
  return EarlyAnswer{acp_handshake(req->second), Encoder{true}.result(req->first, acp::initialize_result())};
}

}  // namespace llmx::rpc
