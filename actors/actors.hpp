// The map of llmx: every actor interface, each message commented. Actors talk only through
// these typed interfaces; the value types are in actors/messages.hpp and protocol/, and every
// one of them is listed in actors/message_list.hpp.
//
// Words (one per concept; the wire keeps the reference's names where they differ):
//   session       one connected client (an MCP or app-server client on stdio, an embedding host)
//                 and the actor that serves it. The wire's `session_configured` / `sessionId`
//                 name a conversation; "approved for session" means for that conversation.
//   conversation  one live agent dialogue: the conversation actor, its history and settings.
//   thread        a conversation as the v2 wire and the store see it, live or stored; a thread
//                 id is its conversation id.
//   rollout       the JSONL file a thread is stored in (`$LLMX_HOME/sessions/.../rollout-*.jsonl`).
//   turn          one user input and everything the agent does until it completes or aborts
//                 (turn/started, turn/completed, turn_aborted).
//   task          what a turn executor runs: a turn, or a manual compaction (`compact`).
//   method        a JSON-RPC method a server binds in its table (protocol/rpc/method_table.hpp).
//   MCP server    a server the user configured in [mcp_servers.<name>] whose tools the model can
//                 call (llmx is its client); not to be confused with `llmx mcp-server`, where
//                 llmx is the server.
//   claim         what a batch of a model stream's events carries to the sessions; the stream
//                 stops reading while too many of its claims are out (actors/delivery_window.hpp).
//
//  stdin ─► stdio reader ─► protocol session ─► conversation manager ─► conversation
//  stdout ◄─ stdio writer ◄─┘        ▲                                    │  ▲
//                                    └──────── ConversationEvents ────────┘  │
//                                             turn executor ◄─ TaskSpec ─────┘
//                                               │    ▲     │ McpConnect / McpCall
//                                  ModelRequest ▼    │     ▼
//                                 model streamer     │   MCP hub ─► one MCP client per server ─► its
//                                               ▲    │   (shared by every conversation)   child or HTTP
//                                 StreamOutcome └─ curl event loop ── ModelEvents (straight from the loop)
#pragma once

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace llmx {

// --- atoms (CAF 0.17: at most 10 characters) ---------------------------------------------------
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using unsubscribe_atom = caf::atom_constant<caf::atom("unsubscr")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using new_conv_atom = caf::atom_constant<caf::atom("newconv")>;
using find_conv_atom = caf::atom_constant<caf::atom("findconv")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using interrupt_atom = caf::atom_constant<caf::atom("interrupt")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using idle_atom = caf::atom_constant<caf::atom("idle")>;
using line_atom = caf::atom_constant<caf::atom("line")>;
using oversize_atom = caf::atom_constant<caf::atom("oversize")>;
using eof_atom = caf::atom_constant<caf::atom("eof")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using ahead_atom = caf::atom_constant<caf::atom("ahead")>;
using pause_atom = caf::atom_constant<caf::atom("pause")>;
using pressure_atom = caf::atom_constant<caf::atom("pressure")>;
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;
using timeout_atom = caf::atom_constant<caf::atom("timeout")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using archive_atom = caf::atom_constant<caf::atom("archive")>;
using unarchive_atom = caf::atom_constant<caf::atom("unarchive")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using summary_atom = caf::atom_constant<caf::atom("summary")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using attach_atom = caf::atom_constant<caf::atom("attach")>;
using place_atom = caf::atom_constant<caf::atom("place")>;
using task_atom = caf::atom_constant<caf::atom("task")>;

// Pause (true) or read on (false): session -> conversation -> turn executor -> model streamer.
// Every one travels at high priority, so it passes the event batches its sender is behind on,
// and all at the same one: a "read on" at high priority overtakes a "pause" still waiting at
// normal priority, and the stream stays paused for good (a turn that never ends).
template <class Self, class Handle>
void send_pause(Self* self, const Handle& to, bool paused) {
  self->template send<caf::message_priority::high>(to, pause_atom::value, paused);
}

// Anything that wants a conversation's events (protocol sessions, embedding hosts).
using event_sink_actor = caf::typed_actor<
    // Events of a conversation this sink subscribed to; per conversation, in order.
    caf::reacts_to<ConversationEvents>>;

// Hears when a client's unread output crosses its writer's marks (issue 18, back-pressure).
using pressure_sink_actor = caf::typed_actor<
    // True: more than the high mark waits for the client; false: it drained below the low mark.
    caf::reacts_to<pressure_atom, bool>>;

// Serialises every outgoing line onto stdout (the only writer of stdout).
using line_writer_actor = caf::typed_actor<
    // Queue one complete JSON line (without the trailing newline).
    caf::reacts_to<line_atom, std::string>,
    // Queue a reply that needs no earlier line before it (a ping, a listing): it goes out ahead
    // of the lines still queued for a slow client, at the next line boundary.
    caf::reacts_to<ahead_atom, std::string>,
    // Who to tell when the queue crosses the marks (LLMX_OUTPUT_PAUSE_BYTES; the session).
    caf::reacts_to<pressure_atom, pressure_sink_actor>,
    // Write what is queued (sent by the writer to itself: one write per mailbox drain).
    caf::reacts_to<flush_atom>,
    // Flush, then terminate; replies once everything is on stdout.
    caf::replies_to<shutdown_atom>::with<bool>>;

// A protocol session (MCP server, app server): one per connected client.
using session_actor = event_sink_actor::extend<
    // One line read from the client (newline stripped).
    caf::reacts_to<line_atom, std::string>,
    // A line longer than the limit was read and discarded; the value is the limit.
    caf::reacts_to<oversize_atom, uint64_t>,
    // The client closed its side: finish in-flight work and shut down.
    caf::reacts_to<eof_atom>,
    // From the writer: the client reads slower than we write (true) or caught up (false); the
    // session pauses or resumes the model streams of the conversations it follows.
    caf::reacts_to<pressure_atom, bool>,
    // Timer after eof: stop waiting for in-flight turns and shut down now.
    caf::reacts_to<shutdown_atom>,
    // From the MCP task board: lines to write for a task this session follows (its llmx/event,
    // progress and notifications/tasks/status).
    caf::reacts_to<task_atom, std::string>,
    // From the MCP task board: ask the client for a task's input (when it answers, the reply
    // goes back to the board as TaskInput).
    caf::reacts_to<TaskAsk>,
    // From a turn executor: read or write files through this session's client (ACP fs/*, where
    // the client offered it); replies when the client answered every request.
    caf::replies_to<FileIo>::with<FileIoDone>>;

// The only owner of the stored threads (`$LLMX_HOME/sessions`, `archived_sessions`): writes
// rollout lines, keeps the listing index, loads, archives and unarchives. Runs on its own
// thread because it blocks on the disk; conversations only queue lines and never wait for it.
using rollout_store_actor = caf::typed_actor<
    // Queue lines for a rollout file (written in one batch per mailbox drain).
    caf::reacts_to<RolloutAppend>,
    // Write what is queued (sent by the store to itself).
    caf::reacts_to<flush_atom>,
    // Write everything queued so far and sync it to disk; replies when done (clean shutdown).
    caf::replies_to<sync_atom>::with<bool>,
    // One page of stored threads, newest first (error: invalid cursor, unreadable store).
    caf::replies_to<ListThreads>::with<ThreadPage>,
    // Read a stored thread back for resuming.
    caf::replies_to<LoadThread>::with<LoadedThread>,
    // The summary of one stored thread (by path or id) from its head.
    caf::replies_to<summary_atom, ThreadRef>::with<ThreadSummaryReply>,
    // A stored thread's summary and whole rollout text (found under sessions/ by id, or by path).
    caf::replies_to<ReadThread>::with<StoredThread>,
    // Move a thread's rollout to archived_sessions/ (out of every listing); replies the new path.
    caf::replies_to<archive_atom, ThreadRef>::with<std::string>,
    // Move an archived rollout back under sessions/; replies the restored path.
    caf::replies_to<unarchive_atom, ThreadRef>::with<std::string>>;

// Streams one model request: HTTP, SSE decoding, retries, idle timeout.
using model_streamer_actor = caf::typed_actor<
    // Stop the request; nothing more is reported to the executor.
    caf::reacts_to<cancel_atom>,
    // From the HTTP event loop: how an attempt ended. Its output was already streamed to the
    // turn executor from the loop, so the data path skips this actor.
    caf::reacts_to<StreamOutcome>,
    // Timer: start attempt number N after a backoff.
    caf::reacts_to<retry_atom, uint32_t>,
    // Timer: check whether the stream has been silent for too long (generation counter).
    caf::reacts_to<idle_atom, uint64_t>,
    // Stop reading the response (true), so the provider waits on TCP, or read on (false). The
    // idle timeout does not count while paused.
    caf::reacts_to<pause_atom, bool>>;

// Asks the client for approvals of one conversation and remembers "approved for session".
// Whether to ask at all is decided by plain code (sandbox/approval.hpp) before the request.
using approval_broker_actor = caf::typed_actor<
    // From a turn executor: may this call go ahead? Replies at once from the session cache,
    // else emits the request event through the conversation and replies when the client
    // answers, when the approval timeout passes (denied, DECISIONS P3) or when cancelled.
    caf::replies_to<ApprovalRequest>::with<ApprovalReply>,
    // From the conversation: the client's exec_approval / patch_approval op.
    caf::reacts_to<ApprovalAnswer>,
    // Timer: request number N (for this call id) waited too long; stale timers are ignored.
    caf::reacts_to<timeout_atom, std::string, uint64_t>,
    // From the conversation: its task ended; every pending request is denied.
    caf::reacts_to<cancel_atom>>;

// Runs commands of one task in child processes (own process group, sandbox applied in the
// child). Output goes live to the requester as ExecOutput; the process loop reports the end.
using exec_sandbox_actor = caf::typed_actor<
    // Run a command; replies when it has ended (exit, signal, timeout, kill or spawn failure).
    caf::replies_to<ExecRequest>::with<ExecDone>,
    // From the process loop: a command ended.
    caf::reacts_to<ExecDone>,
    // Kill every running command (interrupt); their replies follow as killed.
    caf::reacts_to<cancel_atom>>;

// The client of one configured MCP server (engine.md §10): one per server and configuration per
// process, started by the hub at first use and shared by every conversation that uses it.
// Requests are multiplexed by id; a server that dies or hangs is restarted with backoff.
using mcp_client_actor = caf::typed_actor<
    // The server's state once its start-up ended (starting it if it is not running).
    caf::replies_to<status_atom>::with<McpServerStatus>,
    // Call a tool; replies when the server answers, the call times out or the server dies.
    caf::replies_to<McpCall>::with<McpCallResult>,
    // The caller stops waiting for the call with this key: the server gets notifications/cancelled.
    caf::reacts_to<cancel_atom, std::string>,
    // From the transport of connection N: one message of the server.
    caf::reacts_to<line_atom, uint64_t, std::string>,
    // From the transport of connection N: it ended, and why.
    caf::reacts_to<eof_atom, uint64_t, std::string>,
    // Timer: connection N's handshake took longer than the start-up timeout.
    caf::reacts_to<timeout_atom, uint64_t>,
    // Timer: the call with this key took longer than the tool timeout.
    caf::reacts_to<timeout_atom, std::string>,
    // Timer: ping number N, sent after a call timed out, is still unanswered (hung).
    caf::reacts_to<idle_atom, uint64_t>,
    // Timer: start the server again after a crash (backoff).
    caf::reacts_to<retry_atom>>;

// Finds or starts the MCP clients of the process (one hub per actor system).
using mcp_hub_actor = caf::typed_actor<
    // The clients of these servers, each once its start-up ended (disabled ones are left out).
    caf::replies_to<McpConnect>::with<McpServers>>;

// What each provider serves (issue 19): its model list and LiteLLM's details, fetched in the
// background through the HTTP loop and cached per provider for its TTL, and which wire an
// `auto` provider takes. One per actor system; never waits on the network itself.
using model_registry_actor = caf::typed_actor<
    // The provider's catalogue: cached, else fetched (waiting at most `wait_ms`), else the
    // built-in table with a note saying why.
    caf::replies_to<ModelsQuery>::with<models::ModelCatalog>,
    // One model's facts and the wire to speak, from what is cached (a fetch starts if due).
    caf::replies_to<ModelLookup>::with<models::ModelSpec>,
    // An `auto` provider refused Responses: Chat from now on in this process (logged once).
    caf::reacts_to<WireFallback>,
    // From the HTTP loop: one part of a fetch ended.
    caf::reacts_to<ModelsFetched>,
    // Timer: the fetch of this provider (generation N) took too long.
    caf::reacts_to<timeout_atom, std::string, uint64_t>,
    // Timer: queries waiting for this provider's first fetch (generation N) take the table now.
    caf::reacts_to<idle_atom, std::string, uint64_t>>;

// Runs one task of a conversation: model request, tool calls, results, next request...
using turn_executor_actor = caf::typed_actor<
    // Begin the task.
    caf::reacts_to<start_atom, TaskSpec>,
    // Abort the task: emits turn_aborted{interrupted}, then TaskDone.
    caf::reacts_to<interrupt_atom>,
    // Pause (true) or resume the task's model stream, this request's and the next ones'.
    caf::reacts_to<pause_atom, bool>,
    // User input that arrived while the task runs; it joins the next model request.
    caf::reacts_to<InjectInput>,
    // Streamed model output (from this task's model streamer).
    caf::reacts_to<ModelEvents>,
    // The model request is being retried.
    caf::reacts_to<ModelRetrying>,
    // The model request failed for good.
    caf::reacts_to<ModelFailed>,
    // The model request's provider does not serve Responses: it goes on over Chat.
    caf::reacts_to<WireFallback>,
    // Live output of a command this task runs (straight from the process loop).
    caf::reacts_to<ExecOutput>,
    // Progress of an MCP tool call this task runs.
    caf::reacts_to<McpProgress>,
    // A server asks the user something during an MCP call of this task; replies the answer
    // (declined when nobody can be asked).
    caf::replies_to<McpElicitation>::with<McpElicitationReply>>;

// One conversation (thread): its SQ/EQ pair, history, settings and subscribers.
using conversation_actor = caf::typed_actor<
    // Submit an op (SQ). Replies with the submission id (assigned when the given one is empty).
    caf::replies_to<submit_atom, Submission>::with<std::string>,
    // Receive every later event of this conversation, in order (EQ fan-out, DECISIONS P7).
    caf::reacts_to<subscribe_atom, event_sink_actor>,
    // Stop receiving events.
    caf::reacts_to<unsubscribe_atom, event_sink_actor>,
    // From a subscriber whose client reads slower than the turn streams: the running turn's
    // model stream pauses while any subscriber asks (true) and resumes when none does (false,
    // or the subscriber left).
    caf::reacts_to<pause_atom, bool>,
    // A client that leaves for good (a listener's connection closed): it stops receiving events,
    // and when nobody is left, the running task is interrupted instead of running on for no one,
    // and the conversation unloads after ten minutes without a client (its rollout stays, to be
    // resumed); a client that subscribes meanwhile keeps it.
    caf::reacts_to<release_atom, event_sink_actor>,
    // Timer: the unload after a release, if nothing changed since (the count of releases).
    caf::reacts_to<release_atom, uint64_t>,
    // Interrupt the running task (turn_aborted follows); replies whether a task was running.
    caf::replies_to<interrupt_atom>::with<bool>,
    // The running turn's id, "" when idle (a v2 thread's status).
    caf::replies_to<status_atom>::with<std::string>,
    // Make the rollout file now if it still waits for the first user message (the thread is
    // archived, forked or read before anyone spoke in it); replies once its lines are on their
    // way to the store, so what the caller asks the store next finds them. False: no file.
    caf::replies_to<sync_atom>::with<bool>,
    // From a client that edits files itself, before its input: that turn's patches go through it
    // (see FileDelegate).
    caf::reacts_to<FileDelegate>,
    // From the running turn executor (and its approval broker): events to record and fan out,
    // in order.
    caf::reacts_to<TurnEvents>,
    // From the running turn executor: items to append to the history.
    caf::reacts_to<RecordItems>,
    // From the running turn executor: the history was compacted; replace it.
    caf::reacts_to<ReplaceHistory>,
    // From the rollout store: this conversation's rollout file cannot be written.
    caf::reacts_to<RolloutFailed>,
    // From the running turn executor: the task has ended.
    caf::reacts_to<TaskDone>>;

// Creates and finds conversations.
using conversation_manager_actor = caf::typed_actor<
    // Start a conversation with these settings. Replies with its handle and the
    // session_configured event (which the caller delivers first, DECISIONS P10).
    caf::replies_to<new_conv_atom, Config>::with<conversation_actor, SessionConfiguredEvent>,
    // Start a conversation from a stored thread; it keeps the thread's id and appends to its
    // rollout (DECISIONS P12). A thread that is already live is returned as it is.
    caf::replies_to<resume_atom, ResumeThread>::with<conversation_actor, SessionConfiguredEvent>,
    // Archive a stored thread: a live conversation with that id is shut down first (waiting at
    // most 10 s), then the store moves the file. Replies the archived path.
    caf::replies_to<archive_atom, ThreadRef>::with<std::string>,
    // Timer: an archive waited 10 s for its conversation to shut down; it goes ahead now.
    caf::reacts_to<timeout_atom, std::string>,
    // Look up a live conversation by id (error `no such conversation` when unknown).
    caf::replies_to<find_conv_atom, std::string>::with<conversation_actor>,
    // The ids of every live conversation (v2 thread/loaded/list).
    caf::replies_to<list_atom>::with<LoadedThreads>,
    // Shut every conversation down (running tasks are interrupted) and write every rollout line
    // to disk, then reply and terminate. Only conversations that ran a task are waited for; the
    // others have nothing to finish and end after the reply (100,000 idle ones, issue 18).
    caf::replies_to<shutdown_atom>::with<bool>,
    // From a conversation: it starts its first task (by id), so a shutdown waits for it.
    caf::reacts_to<task_atom, std::string>,
    // Itself, shutting down after the reply: end the next slice of conversations that never ran
    // a task, so the client's last output does not wait behind all of their shutdowns.
    caf::reacts_to<idle_atom>>;

// MCP tasks (2025-11-25 `tasks/*`, the 2026-07-28 tasks extension, and the 2026 calls that
// wait on the client): runs the turns of tool calls made as tasks, keeps each outcome for its
// ttl and answers polls. One per server: a task outlives the session (client connection or
// stateless request) that made it, and the last session that asked about it gets its messages.
using mcp_task_board_actor = event_sink_actor::extend<
    // Start a task: the board subscribes to the conversation, submits the turn and replies with
    // the task (refused when the conversation runs a task already).
    caf::replies_to<TaskStart, conversation_actor, session_actor>::with<mcp::TaskView>,
    // A session asks about a task (tasks/get, tasks/result, tasks/cancel, a 2026 call waiting
    // for its turn); refused as a request error when `owner` has no such task.
    caf::replies_to<TaskWatch, session_actor>::with<mcp::TaskView>,
    // tasks/list (refused for a cursor the board did not give).
    caf::replies_to<TaskList>::with<mcp::TaskPage>,
    // The client's answer to one of a task's questions.
    caf::reacts_to<TaskInput>,
    // Timer: forget the tasks whose time is up.
    caf::reacts_to<timeout_atom>>;

// A worker node (`llmx node`): hosts conversations for the fronts attached to it, reached
// through CAF's middleman. Everything a conversation runs (turn executor, model streamer,
// approval broker, exec sandbox, MCP clients) runs on the node; its rollout lines go to the
// front's store. Published at the node's port.
using node_actor = caf::typed_actor<
    // A front attaches with its store: refused (error) when the llmx versions differ; otherwise
    // the node starts a conversation manager for that front and replies with it. The manager's
    // conversations shut down when the front goes away.
    caf::replies_to<attach_atom, NodeAttach>::with<NodeAttached>,
    // A round trip, answered at once: when its answer is back, the front's middleman has handed
    // on everything it queued for this node's connection before it (see cluster.cpp's shutdown).
    caf::replies_to<sync_atom>::with<bool>>;

// The front's conversation manager when conversations live on worker nodes (`--nodes`): the
// manager's interface for sessions, plus what its conversation proxies and timers send it.
using cluster_manager_actor = conversation_manager_actor::extend<
    // Start a stored thread again on a live node (its node was lost); replies the conversation
    // there. The proxy that asked keeps serving the sessions.
    caf::replies_to<place_atom, ResumeThread>::with<conversation_actor, std::string /* node */>,
    // Timer: connect to node N (again).
    caf::reacts_to<retry_atom, uint32_t>>;

// Stands in the front for a conversation on a worker node: sessions hold it as their
// conversation; it is the remote conversation's one subscriber here and fans its events out, so
// a lost node ends a running turn with an error event and the next op resumes elsewhere.
using conversation_proxy_actor = conversation_actor::extend_with<event_sink_actor>::extend<
    // From the cluster manager: a resume placed this conversation on a node while its proxy had
    // none (the proxy takes it, or shuts it down when it was placed meanwhile).
    caf::reacts_to<place_atom, conversation_actor, std::string /* node */>>;

// Registers every message type with its name, so messages can cross process boundaries.
void add_message_types(caf::actor_system_config& cfg);

}  // namespace llmx
