// What an ACP client sends `llmx acp` (protocol/rpc/acp.hpp), read as actors/acp_methods.cpp
// reads it: each line ('\n') parsed and classified, a request's params decoded by a method table
// with ACP's params types, then the plain decoders the handlers call (read_client_capabilities,
// mcp_server_overrides, prompt_text, select_value); a response is a permission outcome
// (decision_of) or an fs/read_text_file result (read_text_file_content). A line that is a JSON
// array is a stored session's recorded events (replay_updates, session/load). The decoders that
// throw json::DecodeError on bad input are caught there, as the handlers do.
#include <string>

#include "fuzz_input.hpp"
#include "protocol/rpc/acp.hpp"

using namespace llmx;
using rpc::Reply;
using Table = rpc::MethodTable<int>;

namespace {

// What the decoders produce is JSON read again later (config overrides, session/update lines).
void require_json(std::string_view text, const char* what) {
  static json::Parser p;
  try {
    p.parse(text);
  } catch (const json::DecodeError&) {
    fuzz::require(false, what);
  }
}

void servers(const std::optional<RawJson>& mcp_servers) {
  try {
    for (const auto& [key, value] : acp::mcp_server_overrides(mcp_servers)) require_json(value.text, "an MCP server override is JSON");
  } catch (const json::DecodeError&) {
  }
}

const Table& table() {
  static const Table t = [] {
    Table t;
    t.bind<acp::InitializeParams, RawJson>("initialize", [](int, acp::InitializeParams p, Reply<RawJson>) {
      acp::read_client_capabilities(p.clientCapabilities);
    });
    t.bind<acp::AuthenticateParams, RawJson>("authenticate", [](int, acp::AuthenticateParams, Reply<RawJson>) {});
    t.bind<acp::NewSessionParams, RawJson>("session/new",
                                           [](int, acp::NewSessionParams p, Reply<RawJson>) { servers(p.mcpServers); });
    t.bind<acp::LoadSessionParams, RawJson>("session/load",
                                            [](int, acp::LoadSessionParams p, Reply<RawJson>) { servers(p.mcpServers); });
    t.bind<acp::ListSessionsParams, RawJson>("session/list", [](int, acp::ListSessionsParams, Reply<RawJson>) {});
    t.bind<acp::PromptParams, RawJson>("session/prompt", [](int, acp::PromptParams p, Reply<RawJson>) {
      try {
        acp::prompt_text(p.prompt);
      } catch (const json::DecodeError&) {
      }
    });
    t.bind<acp::SetModeParams, RawJson>("session/set_mode",
                                        [](int, acp::SetModeParams p, Reply<RawJson>) { acp::find_mode(p.modeId); });
    t.bind<acp::SetConfigOptionParams, RawJson>(
        "session/set_config_option", [](int, acp::SetConfigOptionParams p, Reply<RawJson>) { acp::select_value(p.value); });
    return t;
  }();
  return t;
}

const rpc::ResponderPtr& responder() {
  static const rpc::ResponderPtr r = [] {
    auto out = std::make_shared<rpc::Responder>();
    out->result = [](const rpc::Id&, std::string, rpc::Lane) {};
    out->error = [](const rpc::Id&, const rpc::RpcError&, rpc::Lane) {};
    return out;
  }();
  return r;
}

void one_line(std::string_view line) {
  static json::Parser parser;
  json::Element root;
  try {
    root = parser.parse(line);
  } catch (const json::DecodeError&) {
    return;
  }
  if (root.is_array()) {
    try {
      const auto updates = acp::replay_updates("s", RawJson{json::to_text(root)});
      for (size_t i = 0; i < updates.size(); ++i)
        require_json(updates[i].params, "a replayed session/update's params are JSON");
    } catch (const json::DecodeError&) {
    }
    return;
  }
  auto in = rpc::classify(root, parser.repaired_top_level_id());
  if (in.kind == rpc::Incoming::Kind::request) {
    table().call(0, in, responder());
  } else if (in.kind == rpc::Incoming::Kind::response) {
    acp::decision_of(in.result);
    acp::read_text_file_content(*in.result);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (auto line : fuzz::split(fuzz::text_of(data, size), "\n")) one_line(line);
  return 0;
}
