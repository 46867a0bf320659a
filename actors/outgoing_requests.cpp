#include "actors/outgoing_requests.hpp"

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/rpc/mcp.hpp"
#include "sandbox/approval.hpp"
#include "sandbox/parse_command.hpp"

namespace llmx {

std::optional<ApprovalAsk> approval_ask(const Event& ev, const std::string& conversation_id,
                                        const mcp::ElicitationTag* tag) {
  if (auto* ex = ev.msg.get_if<ExecApprovalRequestEvent>()) {
    if (tag)
      return ApprovalAsk{"elicitation/create", mcp::exec_elicitation_params(*ex, *tag, sandbox::shell_join(ex->command)),
                         ex->call_id, AskKind::exec};
    api::ExecCommandApprovalParams p{conversation_id, ex->call_id, ex->command, ex->cwd, ex->reason, ex->risk,
                                     ex->parsed_cmd};
    return ApprovalAsk{"execCommandApproval", json::to_json(p), ex->call_id, AskKind::exec};
  }
  if (auto* pa = ev.msg.get_if<ApplyPatchApprovalRequestEvent>()) {
    if (tag)
      return ApprovalAsk{"elicitation/create", mcp::patch_elicitation_params(*pa, *tag), pa->call_id,
                         AskKind::patch};
    api::ApplyPatchApprovalParams p{conversation_id, pa->call_id, pa->changes, pa->reason, pa->grant_root};
    return ApprovalAsk{"applyPatchApproval", json::to_json(p), pa->call_id, AskKind::patch};
  }
  if (auto* el = ev.msg.get_if<ElicitationRequestEvent>()) {
    if (tag)
      return ApprovalAsk{"elicitation/create", mcp::forwarded_elicitation_params(*el, *tag), el->id,
                         AskKind::elicitation, el->server_name};
    api::McpElicitationRequestParams p{conversation_id, ev.id, el->server_name, el->id, "form", el->message,
                                       el->requested_schema};
    return ApprovalAsk{"mcpServer/elicitation/request", json::to_json(p), el->id, AskKind::elicitation,
                       el->server_name};
  }
  return std::nullopt;
}

Submission answer_submission(const PendingApproval& pending, const std::optional<json::Element>& result) {
  if (pending.kind == AskKind::elicitation) {  // a configured server's question: its answer goes back
    ResolveElicitationOp op{pending.server_name, pending.call_id, "decline", std::nullopt};
    if (result) {
      auto r = mcp::read_elicitation_reply(*result);
      if (r.action == "accept" || r.action == "cancel") op.decision = *r.action;
      if (r.content) op.content = RawJson{*r.content};
    }
    return Submission{"", std::move(op)};
  }
  ReviewDecision decision = ReviewDecision::denied;
  if (result) {
    auto r = mcp::read_elicitation_reply(*result);
    if (r.action)
      decision = sandbox::parse_elicitation_reply(*r.action, r.content_decision);
    else if (r.decision)
      decision = sandbox::parse_decision(*r.decision);
  }
  if (pending.kind == AskKind::patch) return Submission{"", PatchApprovalOp{pending.call_id, decision}};
  return Submission{"", ExecApprovalOp{pending.call_id, decision}};
}

rpc::Id OutgoingRequests::add(PendingApproval pending) {
  auto id = rpc::Id::from_int(next_++);
  pending_[id] = std::move(pending);
  return id;
}

std::optional<PendingApproval> OutgoingRequests::take(const rpc::Id& reply_id) {
  auto it = pending_.find(reply_id);
  if (it == pending_.end()) return std::nullopt;
  auto pending = std::move(it->second);
  pending_.erase(it);
  return pending;
}

}  // namespace llmx
