#include "protocol/rpc/mcp_handshake.hpp"

#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_stateless.hpp"

namespace llmx::mcp {

Handshake handshake_of(const InitializeParams& p) {
  return Handshake{negotiate_version(p.protocolVersion), p.clientInfo.name + "; " + p.clientInfo.version,
                   read_client_capabilities(p.capabilities)};
}

InitializeResult initialize_result(const Handshake& h, bool tasks_offered) {
  return InitializeResult{h.protocol_version, user_agent(h.client_suffix), tasks_offered && has_tasks(h.protocol_version)};
}

std::optional<EarlyInitialize> answer_initialize_line(std::string_view line, bool tasks_offered) {
  try {
    json::Parser parser;
    auto in = rpc::classify(parser.parse(line), parser.repaired_top_level_id());
    if (in.kind != rpc::Incoming::Kind::request || in.method != "initialize" || is_stateless_request(in.params))
      return std::nullopt;
    // Decoded as the method table decodes it: absent params are `{}`.
    auto params = in.params ? json::from_json<InitializeParams>(*in.params) : json::parse_as<InitializeParams>("{}");
    auto h = handshake_of(params);
    auto reply = rpc::Encoder{true}.result(in.id, json::to_json(initialize_result(h, tasks_offered)));
    return EarlyInitialize{std::move(h), std::move(reply)};
  } catch (const json::DecodeError&) {
    return std::nullopt;  // the session answers it, with the error it deserves
  }
}

}  // namespace llmx::mcp
