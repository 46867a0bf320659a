#include "actors/tool_calls.hpp"

namespace llmx {

void ToolCalls::starting(const rpc::Id& id) { starting_.emplace(id.json, false); }

void ToolCalls::abandon(const rpc::Id& id) { starting_.erase(id.json); }

const ToolCall& ToolCalls::start(const rpc::Id& id, const std::string& conversation_id, conversation_actor conversation,
                                 std::string sub_id, std::optional<RawJson> progress_token) {
  ToolCall call{id, conversation_id, std::move(sub_id), std::move(conversation), std::move(progress_token)};
  if (auto it = starting_.find(id.json); it != starting_.end()) {
    call.cancelled = it->second;
    starting_.erase(it);
  }
  return calls_[conversation_id] = std::move(call);
}

std::optional<ToolCall> ToolCalls::cancel(const std::string& request_id_json) {
  if (auto it = starting_.find(request_id_json); it != starting_.end()) {
    it->second = true;
    return std::nullopt;
  }
  for (auto& [_, call] : calls_) {
    if (call.request_id.json != request_id_json || call.cancelled) continue;
    call.cancelled = true;
    return call;
  }
  return std::nullopt;
}

std::vector<ToolCall> ToolCalls::cancel_all() {
  std::vector<ToolCall> out;
  for (auto& [_, call] : calls_) {
    call.cancelled = true;
    out.push_back(call);
  }
  return out;
}

std::optional<ToolCall> ToolCalls::drop(const std::string& conversation_id) {
  auto it = calls_.find(conversation_id);
  if (it == calls_.end()) return std::nullopt;
  auto call = std::move(it->second);
  calls_.erase(it);
  return call;
}

const ToolCall* ToolCalls::running(const std::string& conversation_id) const {
  auto it = calls_.find(conversation_id);
  return it == calls_.end() ? nullptr : &it->second;
}

std::optional<CallStep> ToolCalls::on_event(const std::string& conversation_id, const Event& ev) {
  auto it = calls_.find(conversation_id);
  if (it == calls_.end() || ev.id != it->second.sub_id) return std::nullopt;
  auto& call = it->second;
  CallStep step;
  bool live = !call.cancelled;
  step.forward = live;
  if (live && call.progress_token) ++call.progress;
  step.ask_approval =
      live && (ev.msg.is<ExecApprovalRequestEvent>() || ev.msg.is<ApplyPatchApprovalRequestEvent>());
  auto answer = [&](std::string text, bool is_error) {
    // A cancelled request gets no reply at all (MCP cancellation rules, P6).
    if (!call.answered && !call.cancelled) {
      step.result = std::move(text);
      step.result_is_error = is_error;
    }
    call.answered = true;
  };
  if (auto* err = ev.msg.get_if<ErrorEvent>()) {
    answer(err->message, true);
  } else if (auto* done = ev.msg.get_if<TaskCompleteEvent>()) {
    answer(done->last_agent_message.value_or(""), false);
    step.ended = true;
  } else if (auto* aborted = ev.msg.get_if<TurnAbortedEvent>()) {
    answer("Turn aborted: " + std::string(enum_name(aborted->reason)), true);
    step.ended = true;
  }
  if (step.ended) {
    ended_ = std::move(call);
    calls_.erase(it);
    step.call = &ended_;
  } else {
    step.call = &call;
  }
  return step;
}

}  // namespace llmx
