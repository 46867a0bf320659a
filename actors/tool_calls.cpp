#include "actors/tool_calls.hpp"

namespace llmx {

void ToolCalls::starting(const rpc::Id& id) { starting_.emplace(id.json, false); }

void ToolCalls::abandon(const rpc::Id& id) { starting_.erase(id.json); }

const ToolCall* ToolCalls::start(const rpc::Id& id, const std::string& conversation_id, conversation_actor conversation,
                                 std::string sub_id, std::optional<RawJson> progress_token) {
  bool cancelled = false;
  if (auto it = starting_.find(id.json); it != starting_.end()) {
    cancelled = it->second;
    starting_.erase(it);
  }
  auto [it, fresh] = calls_.try_emplace(conversation_id);
  if (!fresh) return nullptr;
  it->second = ToolCall{id, conversation_id, std::move(sub_id), std::move(conversation), std::move(progress_token)};
  it->second.cancelled = cancelled;
  return &it->second;
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

std::optional<ToolCall> ToolCalls::cancel_conversation(const std::string& conversation_id) {
  auto it = calls_.find(conversation_id);
  if (it == calls_.end() || it->second.cancelled) return std::nullopt;
  it->second.cancelled = true;
  return it->second;
}

void ToolCalls::set_progress_token(const std::string& conversation_id, std::optional<RawJson> token) {
  if (auto it = calls_.find(conversation_id); it != calls_.end()) it->second.progress_token = std::move(token);
}

std::vector<ToolCall> ToolCalls::cancel_all() {
  std::vector<ToolCall> out;
  for (auto& [_, call] : calls_) {
    call.cancelled = true;
    out.push_back(call);
  }
  return out;
}

std::optional<CallStep> ToolCalls::drop(const std::string& conversation_id) {
  auto it = calls_.find(conversation_id);
  if (it == calls_.end()) return std::nullopt;
  CallStep step;
  answer(it->second, step, "The conversation ended before its turn completed.", true);
  end(it, step);
  return step;
}

void ToolCalls::answer(ToolCall& call, CallStep& step, std::string text, bool is_error) {
  if (!call.answered && !call.cancelled) {
    step.result = std::move(text);
    step.result_is_error = is_error;
  }
  call.answered = true;
}

void ToolCalls::end(std::map<std::string, ToolCall>::iterator it, CallStep& step) {
  ended_ = std::move(it->second);
  if (it == last_) last_ = calls_.end();
  calls_.erase(it);
  step.call = &ended_;
  step.ended = true;
}

const ToolCall* ToolCalls::running(const std::string& conversation_id) const {
  auto it = calls_.find(conversation_id);
  return it == calls_.end() ? nullptr : &it->second;
}

std::optional<CallStep> ToolCalls::on_event(const std::string& conversation_id, const Event& ev,
                                            std::optional<mcp::ProgressReporter::Clock::time_point> now) {
  auto it = last_ != calls_.end() && last_->first == conversation_id ? last_ : calls_.find(conversation_id);
  if (it == calls_.end() || ev.id != it->second.sub_id) return std::nullopt;
  last_ = it;
  auto& call = it->second;
  CallStep step;
  bool live = !call.cancelled;
  step.forward = live;
  // Progress stops once the call has its answer (an error event answers before the turn ends).
  if (live && !call.answered && call.progress_token)
    step.progress = call.progress.on_event(ev.msg, now ? *now : mcp::ProgressReporter::Clock::now());
  step.ask_approval =
      live && (ev.msg.is<ExecApprovalRequestEvent>() || ev.msg.is<ApplyPatchApprovalRequestEvent>() ||
               ev.msg.is<ElicitationRequestEvent>());
  step.call = &call;
  if (auto* err = ev.msg.get_if<ErrorEvent>()) {
    answer(call, step, err->message, true);
  } else if (auto* done = ev.msg.get_if<TaskCompleteEvent>()) {
    answer(call, step, done->last_agent_message.value_or(""), false);
    end(it, step);
  } else if (auto* aborted = ev.msg.get_if<TurnAbortedEvent>()) {
    answer(call, step, "Turn aborted: " + std::string(enum_name(aborted->reason)), true);
    end(it, step);
  }
  return step;
}

}  // namespace llmx
