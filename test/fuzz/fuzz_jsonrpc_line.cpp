// Lines a client sends to a server, read the way every server reads them (actors/session.cpp):
// json::Parser::parse, rpc::classify, then the method table's typed params decoding; and the
// Streamable HTTP gateway's rpc::mcp::http::read_posted / route_of on the same bytes.
// One input is several lines ('\n'), like a session's stdin.
#include <string>

#include "fuzz_input.hpp"
#include "protocol/rpc/account_api.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/mcp.hpp"
#include "protocol/rpc/mcp_http.hpp"
#include "protocol/rpc/mcp_tasks.hpp"
#include "protocol/rpc/method_table.hpp"
#include "protocol/rpc/v2_api.hpp"
#include "protocol/rpc/v2_config.hpp"
#include "protocol/rpc/v2_threads.hpp"
#include "protocol/rpc/workspace_api.hpp"

using namespace llmx;
using rpc::Empty;
using rpc::Reply;
using Table = rpc::MethodTable<int>;

namespace {

// Decoding is what is fuzzed: a handler that got its params has nothing left to do.
template <class P>
void decoded(int, P, Reply<Empty>) {}

// Where handlers go on to read their params further, the same plain functions run here; the
// actors answer any exception of these as a request error (session_state.hpp config_or_error).
template <class F>
void overrides_of(F&& f) {
  try {
    f();
  } catch (const std::exception&) {
  }
}

const Table& app_table() {
  static const Table t = [] {
    Table t;
    t.bind<v2::InitializeParams, Empty>("initialize", decoded);
    t.bind<v2::ThreadStartParams, Empty>("thread/start", [](int, v2::ThreadStartParams p, Reply<Empty>) {
      overrides_of([&] { v2::start_overrides(p); });
    });
    t.bind<v2::ThreadIdParams, Empty>("thread/resume", decoded);
    t.bind<v2::ThreadListParams, Empty>("thread/list", decoded);
    t.bind<v2::ThreadForkParams, Empty>("thread/fork", decoded);
    t.bind<v2::ThreadReadParams, Empty>("thread/read", decoded);
    t.bind<v2::ThreadRollbackParams, Empty>("thread/rollback", decoded);
    t.bind<v2::ThreadSetNameParams, Empty>("thread/name/set", decoded);
    t.bind<v2::ThreadLoadedListParams, Empty>("thread/loaded/list", [](int, v2::ThreadLoadedListParams p, Reply<Empty>) {
      v2::loaded_page({"a", "b", "c"}, p.cursor, p.limit);
    });
    t.bind<v2::TurnStartParams, Empty>("turn/start", decoded);
    t.bind<v2::TurnSteerParams, Empty>("turn/steer", decoded);
    t.bind<v2::TurnInterruptParams, Empty>("turn/interrupt", decoded);
    t.bind<v2::ConfigReadParams, Empty>("config/read", decoded);
    t.bind<v2::CommandExecParams, Empty>("command/exec", decoded);
    t.bind<v2::CommandExecTerminateParams, Empty>("command/exec/terminate", decoded);
    t.bind<api::GitDiffToRemoteParams, Empty>("gitDiffToRemote", decoded);
    t.bind<api::ExecOneOffCommandParams, Empty>("execOneOffCommand", decoded);
    t.bind<api::FuzzyFileSearchParams, Empty>("fuzzyFileSearch", decoded);
    t.bind<rpc::NoParams, Empty>("getUserAgent", decoded);
    t.bind<api::LoginApiKeyParams, Empty>("loginApiKey", decoded);
    t.bind<api::GetAuthStatusParams, Empty>("getAuthStatus", decoded);
    t.bind<api::AccountReadParams, Empty>("account/read", decoded);
    t.bind<api::LoginStartParams, Empty>("account/login/start", decoded);
    t.bind<api::FeedbackUploadParams, Empty>("feedback/upload", decoded);
    t.bind<api::NewConversationParams, Empty>("newConversation", [](int, api::NewConversationParams p, Reply<Empty>) {
      overrides_of([&] { p.to_overrides(); });
    });
    t.bind<api::SendUserMessageParams, Empty>("sendUserMessage", decoded);
    t.bind<api::SendUserTurnParams, Empty>("sendUserTurn", decoded);
    t.bind<api::ConversationIdParams, Empty>("interruptConversation", decoded);
    t.bind<api::AddConversationListenerParams, Empty>("addConversationListener", decoded);
    t.bind<api::ListConversationsParams, Empty>("listConversations", decoded);
    t.bind<api::ResumeConversationParams, Empty>("resumeConversation",
                                                 [](int, api::ResumeConversationParams p, Reply<Empty>) {
                                                   if (p.overrides) overrides_of([&] { p.overrides->to_overrides(); });
                                                 });
    t.bind<api::ArchiveConversationParams, Empty>("archiveConversation", decoded);
    t.bind<api::GetConversationSummaryParams, Empty>("getConversationSummary", decoded);
    t.bind<api::ModelListParams, Empty>("model/list", decoded);
    return t;
  }();
  return t;
}

const Table& mcp_table() {
  static const Table t = [] {
    Table t;
    t.bind<mcp::InitializeParams, Empty>("initialize", [](int, mcp::InitializeParams p, Reply<Empty>) {
      mcp::read_client_capabilities(p.capabilities);
    });
    t.bind<mcp::SetLevelParams, Empty>("logging/setLevel", decoded);
    // As actors/mcp_methods.cpp: the `llmx` tool's arguments, then the overrides they stand for.
    t.bind<mcp::ToolCallParams, Empty>("tools/call", [](int, mcp::ToolCallParams p, Reply<Empty>) {
      if (!p.arguments || p.arguments->is_null()) return;
      try {
        if (p.name == "llmx") json::parse_as<mcp::LlmxToolArgs>(p.arguments->text).to_overrides();
        else json::parse_as<mcp::ReplyToolArgs>(p.arguments->text);
      } catch (const json::DecodeError&) {
      }
    });
    t.bind<mcp::TaskIdParams, Empty>("tasks/get", decoded);
    t.bind<mcp::TaskListParams, Empty>("tasks/list", decoded);
    t.on<mcp::CancelledParams>("notifications/cancelled", [](int, mcp::CancelledParams) {});
    return t;
  }();
  return t;
}

// A reply echoes the request's id as its JSON text: it must stay JSON (checked by parsing it).
json::Parser& checker() {
  static json::Parser p;
  return p;
}
void require_json(std::string_view text, const char* what) {
  try {
    checker().parse(text);
  } catch (const json::DecodeError&) {
    fuzz::require(false, what);
  }
}

const rpc::ResponderPtr& responder() {
  static const rpc::ResponderPtr r = [] {
    auto out = std::make_shared<rpc::Responder>();
    out->result = [](const rpc::Id& id, std::string result, rpc::Lane) {
      require_json(rpc::Encoder{}.result(id, result), "a result reply is JSON");
    };
    out->error = [](const rpc::Id& id, const rpc::RpcError& err, rpc::Lane) {
      require_json(rpc::Encoder{}.error(id, err.code, err.message, err.data), "an error reply is JSON");
    };
    return out;
  }();
  return r;
}

void one_line(std::string_view line) {
  static json::Parser parser;  // reused, as a session's
  rpc::Incoming in;
  try {
    auto root = parser.parse(line);
    in = rpc::classify(root, parser.repaired_top_level_id());
  } catch (const json::DecodeError&) {
    return;  // the session answers -32700
  }
  in.id.as_plain_string();
  switch (in.kind) {
    case rpc::Incoming::Kind::request:
      app_table().call(0, in, responder());
      mcp_table().call(0, in, responder());
      break;
    case rpc::Incoming::Kind::notification:
      mcp_table().notify(0, in);
      break;
    case rpc::Incoming::Kind::invalid:
      require_json(rpc::Encoder{}.error(in.id, in.invalid_code, in.invalid_reason), "an invalid-request reply is JSON");
      break;
    default:
      break;
  }
}

// The HTTP gateway: a POSTed body, and a line a session writes; the ids they keep are JSON.
void over_http(std::string_view line) {
  static json::Parser parser;
  auto posted = mcp::http::read_posted(parser, line);
  if (posted.kind == mcp::http::Posted::Kind::request || posted.kind == mcp::http::Posted::Kind::response)
    require_json(posted.id, "Posted::id is compact JSON");
  if (posted.progress_token) require_json(*posted.progress_token, "Posted::progress_token is compact JSON");
  auto route = mcp::http::route_of(parser, line);
  if (!route.request_id.empty()) require_json(route.request_id, "Route::request_id is compact JSON");
  if (!route.progress_token.empty()) require_json(route.progress_token, "Route::progress_token is compact JSON");
  mcp::http::status_of(route, true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (auto line : fuzz::split(fuzz::text_of(data, size), "\n")) {
    one_line(line);
    over_http(line);
  }
  return 0;
}
