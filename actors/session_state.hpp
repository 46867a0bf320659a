// The MCP session's state and reply helpers, shared by the files that handle its methods
// (mcp_session.cpp: protocol and tools; mcp_thread_methods.cpp: stored threads and settings).
#pragma once

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>

#include "actors/actors.hpp"
#include "actors/mcp_session.hpp"
#include "protocol/json_codec.hpp"
#include "protocol/jsonrpc.hpp"

namespace llmx::mcp_detail {

// One tools/call in flight.
struct ActiveCall {
  rpc::Id request_id;
  std::string sub_id;
  conversation_actor conversation;
  std::optional<RawJson> progress_token;
  uint64_t progress = 0;
  bool answered = false;
  bool cancelled = false;
};

struct McpState {
  McpState() = default;
  line_writer_actor writer;
  conversation_manager_actor manager;
  rollout_store_actor store;
  McpSessionOptions options;
  rpc::Encoder rpc{true};
  json::Parser parser;
  bool initialized = false;
  std::string client_suffix;
  std::map<std::string, ActiveCall> calls;  // by conversation id
  // tools/call requests whose conversation is still being created or looked up, by id JSON;
  // true once a notifications/cancelled arrived for it.
  std::map<std::string, bool> starting;
  // elicitation/create requests we sent, by their id: where the answer goes.
  struct PendingApproval {
    conversation_actor conversation;
    std::string call_id;
    bool is_patch = false;
  };
  std::map<int64_t, PendingApproval> approvals;
  int64_t next_request_id = 0;
  bool shutting_down = false;
  bool finished = false;
  static inline const char* name = "llmx.mcp_session";
};

using mcp_ptr = session_actor::stateful_pointer<McpState>;

inline void write(mcp_ptr self, std::string line) { self->send(self->state.writer, line_atom::value, std::move(line)); }

inline void reply(mcp_ptr self, const rpc::Id& id, std::string_view result) { write(self, self->state.rpc.result(id, result)); }

inline void reply_error(mcp_ptr self, const rpc::Id& id, int code, std::string_view message) {
  write(self, self->state.rpc.error(id, code, message));
}

// Decodes typed params; on failure answers -32602 naming the field and returns nullopt.
template <class P>
std::optional<P> decode(mcp_ptr self, const rpc::Incoming& in) {
  try {
    if (!in.params) return json::parse_as<P>("{}");
    return json::from_json<P>(*in.params);
  } catch (const json::DecodeError& err) {
    reply_error(self, in.id, rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what()));
    return std::nullopt;
  }
}


// Stored threads, default model and model list (protocol.md §3, DECISIONS P1). Returns false
// when `in.method` is not one of them.
bool handle_thread_method(mcp_ptr self, const rpc::Incoming& in);

}  // namespace llmx::mcp_detail
