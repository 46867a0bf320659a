// The state of a session (one connected client) and the helpers the files that serve its
// methods share. One session type serves both servers (`flavor`): the MCP server and the app
// server. session.cpp is the actor; each *_methods.cpp binds its methods into the servers' tables.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <map>
#include <unordered_map>
#include <optional>
#include <set>
#include <string>

#include "actors/actors.hpp"
#include "actors/refusal.hpp"
#include "actors/listeners.hpp"
#include "actors/outgoing_requests.hpp"
#include "actors/tool_calls.hpp"
#include "actors/session.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/acp.hpp"
#include "protocol/rpc/delta_lines.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/mcp.hpp"
#include "protocol/rpc/handshake.hpp"
#include "protocol/rpc/mcp_stateless.hpp"
#include "protocol/rpc/method_table.hpp"
#include "protocol/rpc/v2_api.hpp"
#include "protocol/rpc/v2_events.hpp"

namespace llmx::session_detail {

// One ACP session (`llmx acp`): its conversation, the prompt being answered and its mode.
struct AcpSession {
  conversation_actor conversation;
  std::string mode;
  AskForApproval configured_approval = AskForApproval::on_request;  // what the session started with
  SandboxPolicy configured_sandbox;                                   // (its writable roots, network...)
  std::optional<acp::AcpTurn> turn;          // the running prompt's translation
  std::optional<rpc::Reply<RawJson>> prompt;  // its pending answer (the stop reason)
  std::string model;                          // the model selected (configOptions)
  std::vector<models::ModelPreset> models;    // the models offered: what the provider serves
};

struct SessionState {
  SessionState() = default;
  enum class Flavor { mcp, app, acp };
  Flavor flavor = Flavor::mcp;
  line_writer_actor writer;
  conversation_manager_actor manager;
  rollout_store_actor store;
  SessionOptions options;
  rpc::Encoder rpc{true};
  json::Parser parser;
  bool initialized = false;
  std::string client_suffix;
  mcp::ClientCapabilities client_caps;  // what the MCP client declared in initialize
  std::string protocol_version;         // the MCP version negotiated in initialize
  // The 2026-07-28 request being dispatched: what its `_meta` says of the client.
  std::optional<mcp::RequestMeta> request_meta;
  // 2026-07-28 calls waiting for their turn, by request id (JSON): the task each runs as.
  std::map<std::string, std::string> stateless_calls;
  // 2025 tasks/* requests waiting for the board, by request id (JSON): dropped when cancelled.
  std::set<std::string> task_waits;
  ToolCalls tool_calls;        // the MCP server's tools/call in flight
  rpc::DeltaLines call_deltas;  // their streamed deltas' llmx/event lines, from kept prefixes
  Listeners listeners;         // v1 listeners (and the ones v2 threads attach)
  rpc::DeltaLines listener_deltas;  // their streamed deltas' lines, from kept prefixes
  OutgoingRequests outgoing;   // approvals we asked the client, by request id
  // Conversations this session knows (created or resumed here, or looked up), by id; each is
  // monitored, and leaves this table when it ends.
  std::map<std::string, conversation_actor> conversations;
  std::unordered_map<caf::actor_addr, std::string> conversation_ids;  // the same, by address (down messages)
  // The conversations this session subscribed to, and whether its client is behind: they are
  // asked to pause their model streams until it catches up (issue 18, back-pressure).
  std::unordered_map<caf::actor_addr, conversation_actor> followed;  // by address (down messages)
  bool pressed = false;
  // The size of the last batch of event lines, to size the next one (at most kLinesReserve).
  size_t last_lines = 0;
  static constexpr size_t kLinesReserve = 64 * 1024;
  // Conversations that ended while this session knew them, and why ("was archived", "has
  // ended"): a later request to one gets that as its error.
  std::map<std::string, std::string> gone;
  // Parked interruptConversation / turn/interrupt requests, answered at the next turn_aborted.
  std::multimap<std::string, std::function<void(TurnAbortReason)>> interrupt_waiters;  // by conversation id
  // The last rate limits a token_count event carried (account/rateLimits/read).
  std::optional<RateLimitSnapshot> last_rate_limits;
  std::string last_rate_limits_sent;  // params of the last account/rateLimits/updated
  // Threads started or resumed through v2 here: their P9 notifications are derived per thread.
  std::map<std::string, v2::EventTranslator> v2_threads;
  rpc::Notes notes;  // what one event becomes on the v2 or ACP wire, reused from event to event
  rpc::ResponderPtr responder;  // how method answers reach the writer
  // ACP (`llmx acp`): the client's capabilities and its sessions, by session id (the thread id).
  acp::ClientCapabilities acp_caps;
  std::map<std::string, AcpSession> acp_sessions;
  // v2 command/exec runs that the client named (`processId`), so command/exec/terminate finds them.
  std::map<std::string, exec_sandbox_actor> command_execs;
  bool shutting_down = false;
  bool finished = false;
  static inline const char* name = "llmx.session";
};

using session_ptr = session_actor::stateful_pointer<SessionState>;

// Every method of a server is bound once in its table (protocol/rpc/method_table.hpp): handlers
// take typed params and answer through a typed Reply; none sees JSON.
using Methods = rpc::MethodTable<session_ptr>;
using rpc::Empty;
using rpc::NoParams;
using rpc::Reply;
using rpc::RpcError;

inline void write(session_ptr self, std::string line, rpc::Lane lane = rpc::Lane::in_order) {
  if (lane == rpc::Lane::ahead)  // ahead of the lines queued in the writer's mailbox too
    self->send<caf::message_priority::high>(self->state.writer, ahead_atom::value, std::move(line));
  else
    self->send(self->state.writer, line_atom::value, std::move(line));
}

inline void notify(session_ptr self, std::string_view method, const std::string& params_json) {
  write(self, self->state.rpc.notification(method, params_json));
}

// Config for a request of this session: the command line's overrides with the request's own.
// Throws ConfigError (or another std::exception) when it cannot be derived.
Config resolve_config(session_ptr self, const ConfigOverrides& request_overrides);
Config resolve_config(session_ptr self);

// resolve_config with the request's overrides (built by `overrides`, which may throw too),
// answering `error deriving config: ...` (-32600) itself on failure.
template <class R, class Overrides = ConfigOverrides (*)()>
std::optional<Config> config_or_error(session_ptr self, const Reply<R>& reply,
                                      Overrides overrides = [] { return ConfigOverrides{}; }) {
  try {
    return resolve_config(self, overrides());
  } catch (const std::exception& err) {
    reply(RpcError{rpc::kInvalidRequest, fmt::format("error deriving config: {}", err.what())});
    return std::nullopt;
  }
}

// The client's error for an actor's refusal (actors/refusal.hpp): a refused request keeps its
// message under `request_code` (-32602 adds "Invalid params: "); anything else is -32603
// "<what>: <message>".
RpcError rpc_error_of(const caf::error& err, int request_code, std::string_view what);

// The client's error for the MCP task board's refusal: -32602 for a request error (unknown task,
// bad cursor...), -32603 otherwise, with the board's message.
inline RpcError board_error(const caf::error& err) {
  return is_request_error(err) ? RpcError{rpc::kInvalidParams, error_text(err)}
                               : RpcError{rpc::kInternalError, error_text(err)};
}

// Adds a conversation to this session's table and monitors it (see `gone`).
void remember(session_ptr self, const std::string& conversation_id, const conversation_actor& conv);

// Runs `fn` with the conversation's handle, from this session's table or the manager; answers
// `-32600 conversation <id> was archived / has ended` for one that went away while this session
// knew it, `-32600 conversation not found: <id>` for one nobody knows.
template <class R, class F>
void with_conversation(session_ptr self, const Reply<R>& reply, const std::string& conversation_id, F fn) {
  auto& known = self->state.conversations;
  if (auto it = known.find(conversation_id); it != known.end()) return fn(it->second);
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, conversation_id)
      .then(
          [=](conversation_actor conv) {
            remember(self, conversation_id, conv);
            fn(conv);
          },
          [=](caf::error&) {
            auto gone = self->state.gone.find(conversation_id);
            if (gone != self->state.gone.end())
              return reply(RpcError{rpc::kInvalidRequest, fmt::format("conversation {} {}", conversation_id, gone->second)});
            reply(RpcError{rpc::kInvalidRequest, fmt::format("conversation not found: {}", conversation_id)});
          });
}

// Drops what this session knows of a conversation; `why` ("was archived", "has ended") answers
// later requests to it.
void forget_conversation(session_ptr self, const std::string& conversation_id, std::string why);

// Asks the client about an approval event (approval_ask) and remembers where the answer goes.
void ask_approval(session_ptr self, const conversation_actor& conv, const ApprovalAsk& ask, std::string& lines);

// Appends one line to a batch of lines written together.
void add_line(std::string& lines, std::string_view line);
// Starts a line written in place after the ones in `lines`.
void next_line(std::string& lines);
// Appends each note as a notification line, written in place.
void add_notes(const rpc::Encoder& rpc, std::string& lines, const rpc::Notes& notes);

// Subscribes this session to a conversation (the conversation ignores a second subscription
// from the same sink, DECISIONS P7).
// While the client reads slower than we write, a conversation it follows pauses its model stream
// from the moment it subscribes.
inline void subscribe(session_ptr self, const conversation_actor& conv) {
  self->send(conv, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
  self->state.followed.emplace(conv.address(), conv);
  if (self->state.pressed) send_pause(self, conv, true);
}

// The conversation an MCP tools/call of `llmx` (started) or `llmx-reply` (live or resumed) runs
// in: `run` gets it with the prompt, `fail` the reason it cannot be had and whose it is
// (-32602: bad arguments, unknown conversation; -32603: we failed).
// `announce`: send its session_configured as llmx/event first (not to 2026 clients).
using CallFail = std::function<void(const std::string& reason, int code)>;
using CallRun = std::function<void(conversation_actor, const std::string& conversation_id, const std::string& prompt)>;
void with_call_conversation(session_ptr self, const mcp::ToolCallParams& params, const rpc::Id& id, bool announce,
                            CallFail fail, CallRun run);

// v2 (thread_ops_methods.cpp): -32600 `invalid thread id` for a malformed one, answered before
// any actor is asked.
std::optional<RpcError> bad_thread_id(const std::string& thread_id);
// Threads with their live status (a loaded one is asked for its
// running turn: idle or active), and a stored thread as v2 shows it (with its turns when asked).
void with_live_status(session_ptr self, std::vector<v2::Thread> threads,
                      std::function<void(std::vector<v2::Thread>)> done);
void read_v2_thread(session_ptr self, ThreadRef ref, bool with_turns, std::function<void(v2::Thread)> done,
                    std::function<void(RpcError)> fail);
// thread/resume and thread/fork: the conversation `req` opens, attached to this session and
// answered with its turns (`announce`: thread/started follows the reply).
void open_stored_thread(session_ptr self, ResumeThread req, bool announce, Reply<v2::ThreadOpenedResult> reply,
                        std::string what);
// A thread started, resumed or forked through v2 streams to this session (app_methods.cpp).
void attach_thread(session_ptr self, const std::string& thread_id, const conversation_actor& conv);

// What the provider serves (model/list, ACP's model selector): the registry's catalogue, waiting
// at most a few seconds for a first fetch; the built-in table, with a note, when there is no
// registry or it does not answer.
void with_catalog(session_ptr self, const ModelProviderInfo& provider,
                  std::function<void(const models::ModelCatalog&)> next);

// The methods each file serves, bound into a server's table.
void bind_mcp_methods(Methods& t);           // mcp_methods.cpp: MCP itself and its tools
void bind_app_methods(Methods& t);           // app_methods.cpp: v2 initialize, thread/*, turn/*, config/read
void bind_thread_ops_methods(Methods& t);    // thread_ops_methods.cpp: v2 fork, read, rollback, steer…
void bind_command_exec_methods(Methods& t);  // workspace_methods.cpp: v2 command/exec
void bind_acp_methods(Methods& t);           // acp_methods.cpp: the Agent Client Protocol
void bind_conversation_methods(Methods& t);  // conversation_methods.cpp: the v1 conversation methods
enum class ModelListShape { items, data };  // model/list's result key per server (DECISIONS P8)
void bind_thread_methods(Methods& t, ModelListShape shape);  // thread_methods.cpp: stored threads, models
void bind_account_methods(Methods& t);       // account_methods.cpp: identity, auth, account, feedback
void bind_workspace_methods(Methods& t);     // workspace_methods.cpp: git diff, one-off commands, file search

// The client's `initialize`, answered: the session keeps what it declared (mcp_methods.cpp,
// app_methods.cpp, acp_methods.cpp).
void accept_handshake(session_ptr self, rpc::McpHandshake h);
void accept_handshake(session_ptr self, rpc::AppHandshake h);
void accept_handshake(session_ptr self, rpc::AcpHandshake h);

// MCP 2026-07-28 (mcp_stateless_methods.cpp): a request whose `_meta` names its protocol
// version is checked and served from its own table (methods 2026 removed are -32601).
void serve_stateless(session_ptr self, const rpc::Incoming& in);
// notifications/cancelled for a 2026 call still waiting on its turn: the turn stops and the call
// gets no reply. False when no such call waits.
bool cancel_stateless_call(session_ptr self, const std::string& request_id_json);

// The servers' tables, built once.
const Methods& mcp_server_methods();
const Methods& app_server_methods();
const Methods& acp_server_methods();

// ACP (acp_methods.cpp): a conversation's events as session/update notifications, permission
// requests and the prompt's answer; true when the conversation is one of this session's.
bool acp_on_event(session_ptr self, const std::string& conversation_id, const Event& ev, std::string& lines);
// Reads or writes files through the ACP client (fs/read_text_file, fs/write_text_file) for a
// turn executor; `promise` gets what it answered.
void acp_file_io(session_ptr self, FileIo io, caf::typed_response_promise<FileIoDone> promise);
// The client's answer to a session/request_permission.
Submission acp_permission_answer(const PendingApproval& pending, const std::optional<json::Element>& result);

// Forwards one conversation event to this session's v1 listeners (`llmx/event/<type>`, approval
// requests, parked interrupts); `skip_approvals` when a tool call of this session already asks.
void forward_to_listeners(session_ptr self, const std::string& conversation_id, const Event& ev,
                          bool skip_approvals, std::string& lines);

// Remembers the rate limits of a token_count event and queues `account/rateLimits/updated`.
void note_rate_limits(session_ptr self, const Event& ev, std::string& lines);

}  // namespace llmx::session_detail
