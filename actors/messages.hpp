// The value types actors exchange (besides the protocol types in protocol/). All are plain
// structs with one field list, so CAF can serialise them (see protocol/base/caf_inspect.hpp).
#pragma once

#include <cstdint>
#include <caf/actor_control_block.hpp>
#include <map>
#include <string>
#include <vector>

#include "actors/delivery_window.hpp"
#include "protocol/model/chat_request.hpp"
#include "protocol/model/provider_models.hpp"
#include "protocol/config/config.hpp"
#include "protocol/core/model_events.hpp"
#include "protocol/core/ops.hpp"
#include "protocol/rpc/mcp_client_api.hpp"
#include "protocol/rpc/mcp_tasks.hpp"
#include "protocol/store/rollout.hpp"
#include "protocol/store/thread_store.hpp"

namespace llmx {

// Events of one conversation, in order, as delivered to subscribers. Batched: one message per
// burst (e.g. everything one network read produced) keeps the per-delta cost low. The claim
// (never serialised) holds the model stream back until every local subscriber handled the batch.
struct ConversationEvents {
  std::string conversation_id;
  std::vector<Event> events;
  Claim claim;
  LLMX_FIELDS(v("conversation_id", s.conversation_id); v("events", s.events))
};

// The running turn's events, from its executor (or approval broker) to the conversation, which
// records them and fans them out as ConversationEvents, claim included.
struct TurnEvents {
  std::vector<Event> events;
  Claim claim;
  LLMX_FIELDS(v("events", s.events))
};

// A client that edits files itself (ACP `fs/*`, so unsaved editor buffers count): the patches of
// the conversation's next turn read and write through `client` (a session actor, which answers
// FileIo) for its session `session_id`. Sent right before that turn's input; other clients' turns
// keep editing the disk.
struct FileDelegate {
  caf::strong_actor_ptr client;
  std::string session_id;
  LLMX_FIELDS(v("client", s.client); v("session_id", s.session_id))
};
// JSON (logs, tests) says whether a client is set: an actor handle has no JSON form; CAF carries it.
inline void write_json(json::Writer& w, const FileDelegate& d) {
  w.begin_object().field("client", static_cast<bool>(d.client)).field("session_id", d.session_id).end_object();
}

// Read these files (absolute paths), or write these texts, through a FileDelegate's client.
struct FileIo {
  std::string session_id;
  std::vector<std::string> reads;
  std::map<std::string, std::string> writes;
  LLMX_FIELDS(v("session_id", s.session_id); v("reads", s.reads); v("writes", s.writes))
};

// What the client answered: the texts read (by path), and per path the error of a read or write
// that failed.
struct FileIoDone {
  std::map<std::string, std::string> texts;
  std::map<std::string, std::string> errors;
  LLMX_FIELDS(v("texts", s.texts); v("errors", s.errors))
};

// Everything a turn executor needs to run one task.
struct TaskSpec {
  std::string conversation_id;
  std::string sub_id;
  Config config;
  History history;                    // the conversation so far (initial context included)
  std::vector<UserInput> input;       // the user input that starts the task
  bool compact_only = false;          // a manual `compact`: summarise the history, nothing else
  bool first_task = false;            // the conversation's first: it reports MCP servers' start-up
  // What the provider says of the model and which wire it takes (the executor asks the model
  // registry before the first request; empty until then).
  models::ModelSpec model;
  // Patches read and write through this client, when set. Not serialised: a task runs beside its
  // conversation (the conversation spawns its executor), so TaskSpec never leaves the process.
  FileDelegate files;
  LLMX_FIELDS(v("conversation_id", s.conversation_id); v("sub_id", s.sub_id); v("config", s.config);
              v("history", s.history); v("input", s.input); v("compact_only", s.compact_only);
              v("first_task", s.first_task); v("model", s.model, Field::defaulted))
};

// User input that arrives while a task runs; it joins the task's next model request.
struct InjectInput {
  std::vector<UserInput> items;
  LLMX_FIELDS(v("items", s.items))
};

// Items a task adds to the conversation history, in order.
struct RecordItems {
  std::vector<ResponseItem> items;
  LLMX_FIELDS(v("items", s.items))
};

// A task has ended (completed, failed or aborted); its final event was already emitted.
struct TaskDone {
  std::string sub_id;
  bool aborted = false;
  LLMX_FIELDS(v("sub_id", s.sub_id); v("aborted", s.aborted))
};

// One model request of a task.
struct ModelRequest {
  uint64_t seq = 0;  // identifies the request within its task
  Prompt prompt;
  ModelProviderInfo provider;
  std::string call_id_prefix;
  std::string user_agent;
  // The wire to speak: the provider's, or for an `auto` provider what the registry decided. An
  // `auto` provider's Responses request falls back to Chat when the provider refuses it.
  WireApi wire = WireApi::chat;
  LLMX_FIELDS(v("seq", s.seq); v("prompt", s.prompt); v("provider", s.provider);
              v("call_id_prefix", s.call_id_prefix); v("user_agent", s.user_agent); v("wire", s.wire))
};

// Streamed results of a model request, batched per network read.
struct ModelEvents {
  uint64_t seq = 0;
  uint32_t attempt = 0;  // of the request: a retried attempt's late events are stale
  std::vector<ModelEvent> events;
  Claim claim;  // goes on with the events the executor makes of these (see DeliveryWindow)
  LLMX_FIELDS(v("seq", s.seq); v("attempt", s.attempt); v("events", s.events))
};

// The model request is being retried (shown to clients as `stream_error`).
struct ModelRetrying {
  uint64_t seq = 0;
  uint32_t attempt = 0;  // the attempt given up: what it still streams is dropped
  std::string message;
  LLMX_FIELDS(v("seq", s.seq); v("attempt", s.attempt); v("message", s.message))
};

// An `auto` provider refused a Responses request as an API it does not serve: the request goes on
// over Chat, and so does every later one to that provider in this process (the model registry
// remembers it, keyed by ModelProviderInfo::cache_key).
struct WireFallback {
  uint64_t seq = 0;
  std::string provider_key;
  std::string provider_id;
  std::string reason;
  LLMX_FIELDS(v("seq", s.seq); v("provider_key", s.provider_key); v("provider_id", s.provider_id);
              v("reason", s.reason))
};

// --- the model registry (what providers serve, issue 19) -------------------------------------

// A provider's catalogue (model/list, `llmx models`, ACP's model selector).
struct ModelsQuery {
  ModelProviderInfo provider;
  // Nothing fetched yet: wait this long for the first answer, then take the built-in table
  // (0: answer at once). A cached catalogue is answered at once whatever its age.
  int64_t wait_ms = 0;
  bool refresh = false;  // fetch again now, whatever the TTL (and wait as above)
  LLMX_FIELDS(v("provider", s.provider); v("wait_ms", s.wait_ms); v("refresh", s.refresh))
};

// What a task or a new conversation needs about one model; answered from the cache at once.
struct ModelLookup {
  ModelProviderInfo provider;
  std::string model;
  LLMX_FIELDS(v("provider", s.provider); v("model", s.model))
};

// From the HTTP loop: one part of a provider's fetch ended (part 0: /models, 1: /model/info).
struct ModelsFetched {
  std::string provider_key;
  uint64_t generation = 0;
  uint32_t part = 0;
  int64_t status = 0;     // 0: no answer
  std::string body;
  std::string error;      // transport error, empty when an answer came
  LLMX_FIELDS(v("provider_key", s.provider_key); v("generation", s.generation); v("part", s.part);
              v("status", s.status); v("body", s.body); v("error", s.error))
};

// The model request failed for good; `message` is what the `error` event says.
struct ModelFailed {
  uint64_t seq = 0;
  std::string message;
  LLMX_FIELDS(v("seq", s.seq); v("message", s.message))
};

// Replaces a conversation's history after compaction; `summary` is what the `compacted`
// rollout line records.
struct ReplaceHistory {
  History items;
  std::string summary;
  LLMX_FIELDS(v("items", s.items); v("summary", s.summary))
};

// --- rollouts and stored threads -----------------------------------------------------------------

// Lines for one rollout file, queued by its conversation and written by the rollout store.
struct RolloutAppend {
  std::string home;  // the LLMX_HOME the file and its index belong to
  std::string path;
  std::vector<std::string> lines;  // complete JSON lines without the newline
  // A new file: the store writes this session_meta line first (adding git facts it reads from
  // disk) and an index record, so the thread can be found before it is listable.
  std::optional<rollout::SessionMeta> meta;
  // The first user message was just recorded: the thread becomes listable with this preview.
  std::optional<std::string> first_user_message;
  // The thread was renamed: its index record carries the title from now on (thread/list).
  std::optional<std::string> name;
  bool sync = false;               // fsync once these lines are written
  bool close = false;              // the conversation has ended: the store lets go of the file
  caf::strong_actor_ptr owner;     // told RolloutFailed when the file cannot be written
  LLMX_FIELDS(v("home", s.home); v("path", s.path); v("lines", s.lines); v("meta", s.meta);
              v("first_user_message", s.first_user_message); v("name", s.name); v("sync", s.sync);
              v("close", s.close);
              v("owner", s.owner))
};

// The rollout store could not write a conversation's file.
struct RolloutFailed {
  std::string path;
  std::string message;
  LLMX_FIELDS(v("path", s.path); v("message", s.message))
};

// Which stored thread: by id (located under sessions/) or by rollout path (wins when both).
struct ThreadRef {
  std::string home;
  std::optional<std::string> id;
  std::optional<std::string> path;
  LLMX_FIELDS(v("home", s.home); v("id", s.id); v("path", s.path))
};

struct ListThreads {
  std::string home;
  threads::ListQuery query;
  LLMX_FIELDS(v("home", s.home); v("query", s.query))
};

struct ThreadPage {
  threads::ListPage page;
  LLMX_FIELDS(v("page", s.page))
};

struct ThreadSummaryReply {
  threads::ThreadSummary summary;
  LLMX_FIELDS(v("summary", s.summary))
};

// A stored thread read back for resuming: its history rebuilt onto `initial_context`.
struct LoadThread {
  ThreadRef ref;
  std::vector<ResponseItem> initial_context;
  bool with_lines = false;  // a fork: also the file's lines to copy
  uint64_t user_budget = rollout::kUserMessageBudgetBytes;  // kept at a compaction (compaction.hpp)
  LLMX_FIELDS(v("ref", s.ref); v("initial_context", s.initial_context); v("with_lines", s.with_lines);
              v("user_budget", s.user_budget))
};

struct LoadedThread {
  std::string id;
  std::string path;
  std::vector<ResponseItem> history;
  JsonOf<RecordedEvents> initial_messages{"[]"};  // the persisted events
  bool has_user_message = false;
  std::vector<std::string> warnings;  // skipped lines, a cut last line
  std::vector<size_t> turn_starts;    // history length where each turn began (rollback cuts there)
  // A fork: the stored lines after session_meta, copied as they are into the new file, and the
  // first user message (the new thread's preview).
  std::vector<std::string> lines;
  std::optional<std::string> first_user_message;
  LLMX_FIELDS(v("id", s.id); v("path", s.path); v("history", s.history);
              v("initial_messages", s.initial_messages); v("has_user_message", s.has_user_message);
              v("warnings", s.warnings); v("turn_starts", s.turn_starts); v("lines", s.lines);
              v("first_user_message", s.first_user_message))
};

// Start a conversation from a stored thread (appending to its rollout, DECISIONS P12).
// With `history` instead of a stored thread, a new conversation (fresh id and file) starts
// from those items (resumeConversation's fork).
struct ResumeThread {
  Config config;
  ThreadRef ref;
  std::optional<std::vector<ResponseItem>> history;
  bool fork = false;  // a new thread with a copy of the stored one's rollout (v2 thread/fork)
  LLMX_FIELDS(v("config", s.config); v("ref", s.ref); v("history", s.history); v("fork", s.fork))
};

// The ids of the live conversations (v2 thread/loaded/list).
struct LoadedThreads {
  std::vector<std::string> ids;
  LLMX_FIELDS(v("ids", s.ids))
};

// A stored thread read whole (v2 thread/read, rollback, unarchive): its summary and the text of
// its rollout, which plain code turns into the thread's turns.
struct ReadThread {
  ThreadRef ref;
  LLMX_FIELDS(v("ref", s.ref))
};

struct StoredThread {
  threads::ThreadSummary summary;
  std::string text;
  LLMX_FIELDS(v("summary", s.summary); v("text", s.text))
};

// --- approvals -----------------------------------------------------------------------------------

// What an "approved for session" answer covers (DECISIONS E12): the exact command (argv, cwd,
// escalation) or, for a patch, the files it touches.
struct ApprovalKey {
  bool is_patch = false;
  std::vector<std::string> command;
  std::string cwd;
  bool escalated = false;
  std::vector<std::string> files;
  LLMX_FIELDS(v("is_patch", s.is_patch); v("command", s.command); v("cwd", s.cwd); v("escalated", s.escalated);
              v("files", s.files))
};

// A turn asks whether one tool call may go ahead. `event` is the exec_approval_request or
// apply_patch_approval_request to show the client.
struct ApprovalRequest {
  std::string call_id;
  std::string sub_id;
  EventMsg event;
  ApprovalKey key;
  LLMX_FIELDS(v("call_id", s.call_id); v("sub_id", s.sub_id); v("event", s.event); v("key", s.key))
};

struct ApprovalReply {
  ReviewDecision decision = ReviewDecision::denied;
  std::string note;  // why, when the decision was not the client's (e.g. "timed out after 600 s")
  std::optional<RawJson> content = std::nullopt;  // an elicitation's form values
  LLMX_FIELDS(v("decision", s.decision); v("note", s.note); v("content", s.content))
};

// The client's answer to an approval request: `id` is the call id or the turn's submission id.
struct ApprovalAnswer {
  std::string id;
  ReviewDecision decision = ReviewDecision::denied;
  std::optional<RawJson> content = std::nullopt;  // an elicitation's form values
  LLMX_FIELDS(v("id", s.id); v("decision", s.decision); v("content", s.content))
};

// --- command execution -------------------------------------------------------------------------

struct ExecRequest {
  std::string call_id;
  std::vector<std::string> argv;
  std::string cwd;
  std::map<std::string, std::string> env;  // the complete child environment
  std::optional<SandboxPolicy> sandbox;    // nullopt: run without a sandbox
  std::string sandbox_cwd;                 // the turn's cwd, which the policy's roots refer to
  bool allow_git_writes = false;
  std::string llmx_home;                   // its secrets are hidden from the command
  bool fallback_approved = false;  // no namespaces here, and the client approved running anyway
  int64_t timeout_ms = 10000;
  // Output kept per stream: its first half and its last half (absent: the process default).
  std::optional<uint64_t> max_capture_bytes;
  LLMX_FIELDS(v("call_id", s.call_id); v("argv", s.argv); v("cwd", s.cwd); v("env", s.env);
              v("sandbox", s.sandbox); v("sandbox_cwd", s.sandbox_cwd);
              v("allow_git_writes", s.allow_git_writes); v("llmx_home", s.llmx_home);
              v("fallback_approved", s.fallback_approved);
              v("timeout_ms", s.timeout_ms); v("max_capture_bytes", s.max_capture_bytes))
};

// Live output of a running command, straight from the process loop to the turn executor.
struct ExecOutput {
  std::string call_id;
  bool is_stderr = false;
  std::string bytes;
  LLMX_FIELDS(v("call_id", s.call_id); v("is_stderr", s.is_stderr); v("bytes", s.bytes))
};

struct ExecDone {
  std::string call_id;
  int64_t exit_code = -1;
  int32_t signal = 0;
  bool timed_out = false;
  bool killed = false;
  std::string stdout_text, stderr_text, aggregated;
  uint64_t duration_ns = 0;
  std::string spawn_error;  // non-empty: the command never ran
  LLMX_FIELDS(v("call_id", s.call_id); v("exit_code", s.exit_code); v("signal", s.signal);
              v("timed_out", s.timed_out); v("killed", s.killed); v("stdout", s.stdout_text);
              v("stderr", s.stderr_text); v("aggregated", s.aggregated); v("duration_ns", s.duration_ns);
              v("spawn_error", s.spawn_error))
};

// --- configured MCP servers (engine.md §10) ------------------------------------------------------

// Find or start the clients of these servers (by name). A client is shared by every
// conversation of the process that configures its server the same way.
struct McpConnect {
  std::map<std::string, McpServerConfig> servers;
  LLMX_FIELDS(v("servers", s.servers))
};

// One server once its start-up ended: ready with its tools, or failed and why.
struct McpServerStatus {
  std::string server;
  bool ready = false;
  std::string error;  // failed: the text the user is shown (engine.md §10.5)
  std::vector<mcp::ServerTool> tools;
  caf::strong_actor_ptr client;  // its mcp_client_actor
  LLMX_FIELDS(v("server", s.server); v("ready", s.ready); v("error", s.error); v("tools", s.tools);
              v("client", s.client))
};

struct McpServers {
  std::vector<McpServerStatus> servers;  // by name
  LLMX_FIELDS(v("servers", s.servers))
};

// Call one tool (bounded by the server's tool_timeout_sec). `key` names the call for cancel and
// progress (unique per process); `caller` (a turn executor) gets McpProgress while it runs.
struct McpCall {
  std::string key;
  std::string tool;
  std::optional<RawJson> arguments;
  caf::strong_actor_ptr caller;
  LLMX_FIELDS(v("key", s.key); v("tool", s.tool); v("arguments", s.arguments); v("caller", s.caller))
};

// How a call ended: the CallToolResult's JSON text, or the error for the model.
struct McpCallResult {
  bool ok = false;
  std::string result;
  std::string error;
  LLMX_FIELDS(v("ok", s.ok); v("result", s.result); v("error", s.error))
};

// A server asks the user something during the call with this key (its elicitation/create).
struct McpElicitation {
  std::string key;
  std::string server;
  std::string message;
  RawJson requested_schema;
  LLMX_FIELDS(v("key", s.key); v("server", s.server); v("message", s.message);
              v("requested_schema", s.requested_schema))
};

// The answer for the server: an ElicitResult (`{"action":"accept","content":{...}}`).
struct McpElicitationReply {
  std::string result;
  LLMX_FIELDS(v("result", s.result))
};

// A server's progress notification for a running call.
struct McpProgress {
  std::string key, message;
  LLMX_FIELDS(v("key", s.key); v("message", s.message))
};

// --- MCP tasks (actors.hpp: mcp_task_board_actor) -----------------------------------------------

// Run a tools/call as a task: its turn is `input` on the conversation (the call's request id
// and progress token tag what it reports).
struct TaskStart {
  std::string owner;                   // who may see the task ("" when clients are not told apart)
  std::optional<int64_t> ttl_ms;       // the ttl the client asked for
  std::string conversation_id;
  std::string request_id;              // the tools/call id (JSON), for llmx/event's _meta.requestId
  std::optional<RawJson> progress_token;
  bool can_elicit = false;             // the client answers elicitation
  // 2026-07-28: the client polls; nothing but progress is pushed to it (no requests, no
  // llmx/event, no status notifications).
  bool stateless = false;
  UserInputOp input;
  LLMX_FIELDS(v("owner", s.owner); v("ttl_ms", s.ttl_ms); v("conversation_id", s.conversation_id);
              v("request_id", s.request_id); v("progress_token", s.progress_token);
              v("can_elicit", s.can_elicit); v("stateless", s.stateless); v("input", s.input))
};

// A session asks about one task. `until`: reply at once (now), once it has ended (ended), or
// once it has ended or waits on the client (input: a 2026 call answered with its questions).
struct TaskWatch {
  enum class Until { now, ended, input };
  std::string owner;
  std::string task_id;
  Until until = Until::now;
  bool cancel = false;     // cancel it first (tasks/cancel)
  bool stateless = false;  // asked by a 2026 request: only 2026 tasks are its (and 2025 ones a 2025 client's)
  // A 2026 call waiting for its turn again: progress follows this round's token from now on.
  std::optional<RawJson> progress_token = {};
  LLMX_FIELDS(v("owner", s.owner); v("task_id", s.task_id); v("until", s.until); v("cancel", s.cancel);
              v("stateless", s.stateless); v("progress_token", s.progress_token))
};

template <>
struct EnumTraits<TaskWatch::Until> {
  static constexpr std::array<std::pair<TaskWatch::Until, std::string_view>, 3> values{{
      {TaskWatch::Until::now, "now"},
      {TaskWatch::Until::ended, "ended"},
      {TaskWatch::Until::input, "input"},
  }};
};

// tasks/list.
struct TaskList {
  std::string owner;
  std::optional<std::string> cursor;
  LLMX_FIELDS(v("owner", s.owner); v("cursor", s.cursor))
};  // (2025-11-25 only: the calls 2026 clients made are not theirs to list)

// The board asks the client something for a task (2025-11-25: elicitation/create on the
// session, tagged with the task).
struct TaskAsk {
  std::string task_id;
  std::string key;     // the approval's call id: the answer names it
  std::string method;
  std::string params;  // JSON
  LLMX_FIELDS(v("task_id", s.task_id); v("key", s.key); v("method", s.method); v("params", s.params))
};

// The client's answer to one of a task's questions: its result (an ElicitResult, JSON), or none
// (an error reply: declined).
struct TaskInput {
  std::string owner;
  std::string task_id;
  std::string key;
  std::optional<std::string> result;
  LLMX_FIELDS(v("owner", s.owner); v("task_id", s.task_id); v("key", s.key); v("result", s.result))
};

// A front (or an embedding host) attaches to a worker node: both must run the same llmx version
// (the messages' shapes are that version's). `store` (a rollout_store_actor on the front) is
// where the node's conversations write their rollouts and load stored threads from.
struct NodeAttach {
  std::string version;
  caf::strong_actor_ptr store;
  LLMX_FIELDS(v("version", s.version); v("store", s.store))
};

// The node's answer: the conversation manager it runs for this front (a
// conversation_manager_actor on the node).
struct NodeAttached {
  std::string version;
  caf::strong_actor_ptr manager;
  LLMX_FIELDS(v("version", s.version); v("manager", s.manager))
};

}  // namespace llmx
