// The MCP server's tools/call bookkeeping, as plain code: calls whose conversation is still
// being created, calls running a turn, cancellation (notifications/cancelled, eof), and what each
// event of a call means for the client (DECISIONS P4-P6). The session actor only encodes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/actors.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/mcp_progress.hpp"

namespace llmx {

// One tools/call in flight.
struct ToolCall {
  rpc::Id request_id;
  std::string conversation_id;
  std::string sub_id;
  conversation_actor conversation;
  std::optional<RawJson> progress_token;
  mcp::ProgressReporter progress = mcp::ProgressReporter{};  // its readable progress, when it has a token
  bool answered = false;   // its result went out (an error event answers before the turn ends)
  bool cancelled = false;  // the client cancelled it: nothing more goes out for it (P6)
};

// What one event of a call means for the client, in this order: the `llmx/event` notification
// (and a progress notification), an approval to ask through elicitation, the final result.
struct CallStep {
  const ToolCall* call = nullptr;     // the call as it is after this event (valid until the next
                                      // use of its ToolCalls; kept there when this event ended it)
  bool forward = false;               // send llmx/event
  std::optional<std::string> progress;  // a notifications/progress message (the call has a token)
  bool ask_approval = false;          // the event asks for an approval
  std::optional<std::string> result;  // the tools/call result text...
  bool result_is_error = false;       // ...and whether it is an error result
  bool ended = false;                 // the call is over and forgotten
};

class ToolCalls {
 public:
  ToolCalls() = default;
  ToolCalls(const ToolCalls&) = delete;  // last_ points into calls_
  ToolCalls& operator=(const ToolCalls&) = delete;
  // A tools/call whose conversation is being created or looked up.
  void starting(const rpc::Id& id);
  // Its conversation could not be had: forget it.
  void abandon(const rpc::Id& id);
  // Its conversation is ready: the call runs (cancelled already, when a cancel came first).
  // nullptr when an earlier call still runs there (or is still being interrupted): this one is
  // refused and forgotten, and the earlier one keeps its place and its answer.
  const ToolCall* start(const rpc::Id& id, const std::string& conversation_id, conversation_actor conversation,
                        std::string sub_id, std::optional<RawJson> progress_token);
  // notifications/cancelled for a request: a running call to interrupt, once; a starting one is
  // marked so it is interrupted as soon as it starts.
  std::optional<ToolCall> cancel(const std::string& request_id_json);
  // The call running in a conversation is cancelled (an MCP task cancelled by its id); returns
  // it to interrupt, once.
  std::optional<ToolCall> cancel_conversation(const std::string& conversation_id);
  // The progress token the call in a conversation reports to from now on (none: no progress).
  void set_progress_token(const std::string& conversation_id, std::optional<RawJson> token);
  // eof: every running call is cancelled; returns those to interrupt.
  std::vector<ToolCall> cancel_all();
  // The conversation of a call ended (its actor is gone): the call ends with an error result
  // (unless answered or cancelled before) and is forgotten.
  std::optional<CallStep> drop(const std::string& conversation_id);
  // The call running in a conversation.
  const ToolCall* running(const std::string& conversation_id) const;
  // One event of a conversation; nullopt when no call of ours owns it.
  // `now` is read only for a call that reports progress (unset: the clock's).
  std::optional<CallStep> on_event(const std::string& conversation_id, const Event& ev,
                                   std::optional<mcp::ProgressReporter::Clock::time_point> now = std::nullopt);
  bool empty() const { return calls_.empty(); }

 private:
  // The call's one result, unless it was answered or cancelled before (P6).
  static void answer(ToolCall& call, CallStep& step, std::string text, bool is_error);
  // Forgets the call; `step` points at it (kept in ended_) from here on.
  void end(std::map<std::string, ToolCall>::iterator it, CallStep& step);

  std::map<std::string, ToolCall> calls_;  // by conversation id
  // The call of the last event: a batch's events are all of one conversation (the map's find
  // compared ids a few times per delta). end() forgets it.
  std::map<std::string, ToolCall>::iterator last_ = calls_.end();
  ToolCall ended_;                         // the call the last event ended (CallStep points here)
  std::map<std::string, bool> starting_;   // by request id JSON: cancelled before it started
};

}  // namespace llmx
