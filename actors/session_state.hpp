// The state of a JSON-RPC session and its reply helpers, shared by the files that handle its
// methods. One session type serves both front ends (`flavor`): the MCP server (mcp_session.cpp:
// MCP protocol and tools) and the app server; the conversation methods they share live in
// conversation_methods.cpp and mcp_thread_methods.cpp.
#pragma once

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>

#include "actors/actors.hpp"
#include "actors/mcp_session.hpp"
#include "protocol/json_codec.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/v2_events.hpp"

namespace llmx::session_detail {

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

// A v1 `addConversationListener` subscription.
struct Listener {
  std::string conversation_id;
  bool raw_events = false;
};

struct SessionState {
  SessionState() = default;
  enum class Flavor { mcp, app };
  Flavor flavor = Flavor::mcp;
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
  // Conversations this session knows (created or resumed here, or looked up), by id.
  std::map<std::string, conversation_actor> conversations;
  std::map<std::string, Listener> listeners;  // by subscription id
  // Parked interruptConversation / turn/interrupt requests, answered at the next turn_aborted.
  struct InterruptWaiter {
    rpc::Id id;
    bool v2 = false;  // turn/interrupt answers {}, interruptConversation {abortReason}
  };
  std::multimap<std::string, InterruptWaiter> interrupt_waiters;  // by conversation id
  // The last rate limits a token_count event carried (account/rateLimits/read).
  std::optional<RateLimitSnapshot> last_rate_limits;
  std::string last_rate_limits_sent;  // params of the last account/rateLimits/updated
  // Threads started or resumed through v2 here: their P9 notifications are derived per thread.
  std::map<std::string, v2::EventTranslator> v2_threads;
  int64_t next_request_id = 0;
  bool shutting_down = false;
  bool finished = false;
  static inline const char* name = "llmx.mcp_session";
};

using session_ptr = session_actor::stateful_pointer<SessionState>;

inline void write(session_ptr self, std::string line) { self->send(self->state.writer, line_atom::value, std::move(line)); }

inline void reply(session_ptr self, const rpc::Id& id, std::string_view result) { write(self, self->state.rpc.result(id, result)); }

inline void reply_error(session_ptr self, const rpc::Id& id, int code, std::string_view message) {
  write(self, self->state.rpc.error(id, code, message));
}

// Decodes typed params; on failure answers -32602 naming the field and returns nullopt.
template <class P>
std::optional<P> decode(session_ptr self, const rpc::Incoming& in) {
  try {
    if (!in.params) return json::parse_as<P>("{}");
    return json::from_json<P>(*in.params);
  } catch (const json::DecodeError& err) {
    reply_error(self, in.id, rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what()));
    return std::nullopt;
  }
}


// Runs `fn` with the conversation's handle, from this session's table or the manager; answers
// `-32600 conversation not found: <id>` otherwise.
template <class F>
void with_conversation(session_ptr self, const rpc::Id& id, const std::string& conversation_id, F fn) {
  auto& known = self->state.conversations;
  if (auto it = known.find(conversation_id); it != known.end()) return fn(it->second);
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, conversation_id)
      .then(
          [=](conversation_actor conv) {
            self->state.conversations[conversation_id] = conv;
            fn(conv);
          },
          [=](caf::error&) {
            reply_error(self, id, rpc::kInvalidRequest, fmt::format("conversation not found: {}", conversation_id));
          });
}

// Subscribes this session to a conversation (the conversation ignores a second subscription
// from the same sink, DECISIONS P7).
inline void subscribe(session_ptr self, const conversation_actor& conv) {
  self->send(conv, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
}

// The app server's requests: initialize gating, the v2 methods, then the shared ones.
void handle_app_request(session_ptr self, const rpc::Incoming& in);

// The shared v1 conversation methods (newConversation, sendUserMessage, sendUserTurn,
// interruptConversation, add/removeConversationListener). Returns false for other methods.
bool handle_conversation_method(session_ptr self, const rpc::Incoming& in);

// Forwards one conversation event to this session's v1 listeners (`llmx/event/<type>`, approval
// requests, parked interrupts); `skip_approvals` when a tool call of this session already asks.
void forward_to_listeners(session_ptr self, const std::string& conversation_id, const Event& ev,
                          bool skip_approvals, std::string& lines);

// Stored threads, default model and model list (protocol.md §3, DECISIONS P1). Returns false
// when `in.method` is not one of them.
bool handle_thread_method(session_ptr self, const rpc::Incoming& in);

// Account, auth and utility methods (account_methods.cpp: getUserSavedConfig, getUserAgent,
// userInfo, v1 auth, account/*, feedback/upload, gitDiffToRemote, execOneOffCommand,
// fuzzyFileSearch). Returns false when `in.method` is not one of them.
bool handle_account_method(session_ptr self, const rpc::Incoming& in);
// Remembers the rate limits of a token_count event and queues `account/rateLimits/updated`.
void note_rate_limits(session_ptr self, const Event& ev, std::string& lines);

}  // namespace llmx::session_detail
