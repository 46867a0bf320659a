#include "protocol/rpc/handshake.hpp"

#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
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

// `line` as an `initialize` request with params P, decoded as the method table decodes them
// (absent params are `{}`); `answer(id, params, raw_params)` makes the answer. nullopt for
// anything else.
template <class P, class Answer>
std::optional<EarlyAnswer> answer_initialize(std::string_view line, Answer&& answer) {
  try {
    json::Parser parser;
    auto in = classify(parser.parse(line), parser.repaired_top_level_id());
    if (in.kind != Incoming::Kind::request || in.method != "initialize") return std::nullopt;
    auto params = in.params ? json::from_json<P>(*in.params) : json::parse_as<P>("{}");
    return answer(in, std::move(params));
  } catch (const json::DecodeError&) {
    return std::nullopt;  // the session answers it, with the error it deserves
  }
}

}  // namespace

std::optional<EarlyAnswer> answer_mcp_initialize(std::string_view line, bool tasks_offered) {
  return answer_initialize<mcp::InitializeParams>(line, [&](const Incoming& in, mcp::InitializeParams p) {
    if (mcp::is_stateless_request(in.params)) return std::optional<EarlyAnswer>();
    auto h = mcp_handshake(p);
    auto reply = Encoder{true}.result(in.id, json::to_json(mcp_initialize_result(h, tasks_offered)));
    return std::optional<EarlyAnswer>(EarlyAnswer{std::move(h), std::move(reply)});
  });
}

std::optional<EarlyAnswer> answer_app_initialize(std::string_view line) {
  return answer_initialize<v2::InitializeParams>(line, [](const Incoming& in, v2::InitializeParams p) {
    auto h = app_handshake(p);
    auto reply = Encoder{false}.result(in.id, json::to_json(app_initialize_result(h)));  // no "jsonrpc"
    return std::optional<EarlyAnswer>(EarlyAnswer{std::move(h), std::move(reply)});
  });
}

std::optional<EarlyAnswer> answer_acp_initialize(std::string_view line) {
  return answer_initialize<acp::InitializeParams>(line, [](const Incoming& in, acp::InitializeParams p) {
    auto reply = Encoder{true}.result(in.id, acp::initialize_result());
    return std::optional<EarlyAnswer>(EarlyAnswer{acp_handshake(p), std::move(reply)});
  });
}

}  // namespace llmx::rpc
