// Requests this session sends its client (approvals), written in one place for every server: an
// approval event becomes elicitation/create for an MCP tool call, execCommandApproval or
// applyPatchApproval for a v1 listener; the pending table routes the client's answer back to
// the conversation that asked.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "actors/actors.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/rpc/mcp.hpp"

namespace llmx {

// The request that asks the client about one approval event.
enum class AskKind { exec, patch, elicitation };

struct ApprovalAsk {
  std::string method;
  std::string params;  // JSON
  std::string call_id;  // the elicitation's request id for a forwarded elicitation
  AskKind kind = AskKind::exec;
  std::string server_name = {};  // a forwarded elicitation's server
};

// nullopt unless `ev` asks for an approval or forwards an MCP server's elicitation. `tool_call`: the tools/call the event belongs to
// (elicitation/create, tagged with that call); nullptr for a v1 listener.
// `tag`: for an MCP tool call, what its elicitation/create carries (the call, its task, the
// negotiated revision's layout); nullptr for a v1 listener.
std::optional<ApprovalAsk> approval_ask(const Event& ev, const std::string& conversation_id,
                                        const mcp::ElicitationTag* tag);

// Where the client's answer to one of our requests goes.
struct PendingApproval {
  conversation_actor conversation;
  std::string call_id;
  AskKind kind = AskKind::exec;
  std::string server_name;
  std::string task_id = {};  // asked for an MCP task: the answer goes to the task board
  // Not an approval (ACP fs/*): the client's result, or nullopt and its error message.
  std::function<void(const std::optional<json::Element>& result, const std::string& error)> on_reply = {};
};

// The submission that gives a conversation the client's answer to `pending`: the elicitation
// result (`{action, content}` or the legacy `{decision}`), or nullopt when there is none (a
// JSON-RPC error reply, nobody to ask) which counts as denied / declined (DECISIONS P3).
Submission answer_submission(const PendingApproval& pending, const std::optional<json::Element>& result);

class OutgoingRequests {
 public:
  // Remembers a request; returns the id to send it with.
  rpc::Id add(PendingApproval pending);
  // The request a reply answers (its id as JSON); nullopt for an id we never sent or answered.
  std::optional<PendingApproval> take(const rpc::Id& reply_id);
  size_t size() const { return pending_.size(); }

 private:
  int64_t next_ = 0;
  std::map<rpc::Id, PendingApproval> pending_;  // by the id we sent (integers, as JSON text)
};

}  // namespace llmx
