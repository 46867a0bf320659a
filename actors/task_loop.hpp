// One task of a conversation as plain code: model request -> stream -> tool calls (one at a
// time) -> more requests -> compaction (manual, or automatic at the token limit, retried with
// less history after a context overflow) -> finish. It keeps the task's state and answers every
// input with the steps to carry out, in order; it never touches an actor. The turn executor
// (turn_executor.cpp) only wires it: it emits, records, streams, asks and runs what the steps
// say, and feeds the answers back.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/messages.hpp"
#include "actors/tool_flow.hpp"
#include "actors/turn_logic.hpp"
#include "sandbox/turn_diff.hpp"

namespace llmx {

class TaskLoop {
 public:
  // An event for the client (and the rollout), in order with everything else.
  struct Emit {
    explicit Emit(EventMsg&& m) : msg(std::move(m)) {}
    EventMsg msg;
  };
  // Items to append to the conversation's history (their raw_response_item events come first).
  struct Record {
    std::vector<ResponseItem> items;
  };
  // The history was compacted: the conversation replaces its own with this one.
  struct Replace {
    History history;
    std::string summary;
  };
  // Stream this model request; its answers come back tagged with request->seq. Boxed, as is
  // Ask's request: they are the two big steps and the rarest, and a step is as big as its
  // biggest kind (a turn's batches are mostly Emit steps, 320 bytes instead of 1,024).
  struct Request {
    std::unique_ptr<ModelRequest> request;
  };
  // Ask whether a tool call may go ahead; answer with on_approval(generation, ...).
  struct Ask {
    std::unique_ptr<ApprovalRequest> request;
    uint64_t generation = 0;
  };
  // Run a command; answer with on_exec(generation, ...).
  struct Run {
    ExecRequest request;
    uint64_t generation = 0;
  };
  // Call an MCP tool; answer with on_mcp(generation, ...).
  struct CallMcp {
    McpCall call;
    caf::strong_actor_ptr client;
    int64_t timeout_ms = 60000;  // the client answers within this (its tool timeout)
    uint64_t generation = 0;
  };
  // Read or write files through the client (ACP fs/*); answer with on_files(generation, ...).
  struct EditFiles {
    FileIo io;
    uint64_t generation = 0;
  };
  // The task is over (its last event was emitted): stop streaming and running, report it.
  struct Finish {
    bool aborted = false;
  };
  using Step = std::variant<Emit, Record, Replace, Request, Ask, Run, CallMcp, EditFiles, Finish>;
  using Steps = std::vector<Step>;

  // Live output deltas per command stream; the capture goes on after this many.
  static constexpr size_t kMaxDeltasPerStream = 10000;

  TaskLoop(TaskSpec spec, ToolContext tools);

  void start(Steps& out);
  // Streamed model output of request `seq`, read by its `attempt` (stale requests and attempts
  // given up are ignored).
  void on_model_events(uint64_t seq, uint32_t attempt, std::vector<ModelEvent>& events, Steps& out);
  // Attempt `attempt` of request `seq` failed and another follows.
  void on_model_retrying(uint64_t seq, uint32_t attempt, const std::string& message, Steps& out);
  // The provider does not serve Responses: this request went on over Chat, and so do the task's
  // later ones; the clients hear it once, as a warning.
  void on_wire_fallback(uint64_t seq, const std::string& reason, Steps& out);
  void on_model_failed(uint64_t seq, const std::string& message, Steps& out);
  // The answers to Ask and Run steps (stale generations are ignored).
  void on_approval(uint64_t generation, const ApprovalReply& reply, Steps& out);
  void on_exec(uint64_t generation, const ExecDone& done, Steps& out);
  void on_mcp(uint64_t generation, const McpCallResult& result, Steps& out);
  void on_files(uint64_t generation, const FileIoDone& done, Steps& out);
  // A server's progress message for the MCP call that runs now.
  void on_mcp_progress(std::string message, Steps& out);
  // Live output of a running command.
  void on_exec_output(ExecOutput output, Steps& out);
  // User input that arrived while the task runs: it joins the next model request.
  void inject(std::vector<UserInput> input);
  // The user interrupted: turn_aborted, then Finish.
  void interrupt(Steps& out);

  bool done() const { return done_; }
  const History& history() const { return history_; }

 private:
  // Built in place: an EventMsg is a wide variant, and each move of one visits it (a delta's two
  // events were moved five times on their way out).
  void emit(Steps& out, EventMsg&& msg) { out.emplace_back(std::in_place_type<Emit>, std::move(msg)); }
  void emit_all(Steps& out, std::vector<EventMsg>& msgs);
  void record(Steps& out, std::vector<ResponseItem> items);
  void finish(Steps& out, bool aborted);
  void request(Steps& out, History input, std::vector<ToolSpec> tools);
  void send_request(Steps& out);
  void start_compaction(Steps& out);
  void send_compaction_request(Steps& out);
  void finish_compaction(Steps& out);
  void on_response_complete(Steps& out);
  void run_next_call(Steps& out);
  void advance(ToolFlow::Step step, std::vector<EventMsg>& events, Steps& out);
  void continue_after_tools(bool had_calls, Steps& out);

  TaskSpec spec_;
  ToolContext tools_;
  History history_;  // what the next request sends (each request shares it)
  std::vector<std::vector<UserInput>> pending_input_;
  TurnLogic logic_;
  uint64_t seq_ = 0;
  uint32_t retired_attempt_ = 0;  // of request seq_: events of this attempt or earlier are stale
  bool done_ = false;
  // Tools: calls of the last response still to run (in order), the one running, its outputs.
  patch::TurnDiffTracker diffs_;
  std::deque<FunctionCallItem> calls_;
  std::unique_ptr<ToolFlow> flow_;
  uint64_t flow_generation_ = 0;  // answers for an earlier flow are stale
  std::vector<ResponseItem> outputs_;
  std::map<std::string, std::pair<size_t, size_t>> delta_counts_;  // per call: stdout, stderr chunks
  // Compaction in progress: its own bookkeeping (its output is not shown as the turn's), the
  // history it summarises (shrunk when the provider says it does not fit) and what it dropped.
  std::unique_ptr<TurnLogic> compact_logic_;
  History compact_history_;
  size_t compact_dropped_ = 0;
  bool auto_compacted_ = false;  // the last response triggered an auto-compaction
  bool compact_pending_ = false;  // compact before the next request
  std::optional<int64_t> window_;  // the model's context window (config, provider, table)
};

}  // namespace llmx
