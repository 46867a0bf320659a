#include "actors/task_loop.hpp"

#include "protocol/model/retry_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "actors/compaction.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/thread_kept.hpp"
#include "protocol/model/environment_context.hpp"
#include "protocol/model/tools.hpp"
#include "protocol/store/rollout.hpp"

namespace llmx {

TaskLoop::TaskLoop(TaskSpec spec, ToolContext tools)
    : spec_(std::move(spec)), tools_(std::move(tools)), logic_(spec_.conversation_id, spec_.sub_id) {
  history_ = std::move(spec_.history);
  // A task started without asking the model registry (tests, embedders) knows the table's facts.
  if (spec_.model.meta.id.empty())
    spec_.model = models::spec_of({}, spec_.config.model, spec_.config.provider.wire_api);
  window_ = models::window_of(spec_.model, spec_.config.model_context_window);
}

namespace {
size_t count_images(const std::vector<UserInput>& input) {
  return static_cast<size_t>(std::count_if(input.begin(), input.end(), [](const UserInput& i) {
    return i.is<ImageInput>() || i.is<LocalImageInput>();
  }));
}

struct EventMsgTag {};  // the events of one batch of model events (on_model_events)
}  // namespace

void TaskLoop::emit_all(Steps& out, std::vector<EventMsg>& msgs) {
  out.reserve(out.size() + msgs.size());
  for (auto& m : msgs) emit(out, std::move(m));
  msgs.clear();
}

void TaskLoop::record(Steps& out, std::vector<ResponseItem> items) {
  if (items.empty()) return;
  for (const auto& it : items) {
    history_.push_back(it);
    emit(out, RawResponseItemEvent{it});
  }
  out.push_back(Record{std::move(items)});
}

void TaskLoop::finish(Steps& out, bool aborted) {
  if (done_) return;
  done_ = true;
  if (aborted)
    emit(out, TurnAbortedEvent{TurnAbortReason::interrupted});
  else if (spec_.compact_only)
    emit(out, TaskCompleteEvent{});
  else
    emit(out, TaskCompleteEvent{logic_.last_agent_message()});
  out.push_back(Finish{aborted});
}

void TaskLoop::request(Steps& out, History input, std::vector<ToolSpec> tools) {
  auto req = std::make_unique<ModelRequest>();
  req->seq = ++seq_;
  retired_attempt_ = 0;
  req->prompt = base_prompt(spec_.config, spec_.conversation_id, spec_.model);
  req->prompt.input = std::move(input);
  req->prompt.tools = std::move(tools);
  req->provider = spec_.config.provider;
  req->wire = spec_.model.wire;
  req->call_id_prefix = fmt::format("call_{}_{}", spec_.sub_id, seq_);
  req->user_agent = user_agent();
  out.push_back(Request{std::move(req)});
}

void TaskLoop::send_request(Steps& out) {
  auto tools = tools::builtin_tools(spec_.config);
  if (tools_.mcp) tools.insert(tools.end(), tools_.mcp->specs().begin(), tools_.mcp->specs().end());
  request(out, history_, std::move(tools));
  // The turn's answer (not a compaction's summary) keeps to the requested schema.
  auto& prompt = std::get<Request>(out.back()).request->prompt;
  prompt.output_schema = spec_.config.output_schema;
  prompt.cyber_access_program = spec_.config.cyber_access_program;
}

void TaskLoop::start(Steps& out) {
  emit(out, TaskStartedEvent{window_});
  if (spec_.first_task && tools_.mcp)
    for (auto& ev : tools_.mcp->startup_events()) emit(out, std::move(ev));
  if (spec_.compact_only) return start_compaction(out);
  // Images for a model its provider says cannot see them: refused before anything is recorded.
  if (auto refusal = models::image_refusal(spec_.model, count_images(spec_.input))) {
    emit(out, ErrorEvent{*refusal});
    return finish(out, false);
  }
  std::vector<EventMsg> events;
  auto item = logic_.user_input(spec_.input, events);
  record(out, {std::move(item)});
  emit_all(out, events);
  send_request(out);
}

// --- compaction (engine.md §1.12, E14) -------------------------------------------------------

void TaskLoop::start_compaction(Steps& out) {
  compact_history_ = history_;  // shared; trimmed when it does not fit
  compact_dropped_ = 0;
  send_compaction_request(out);
}

// The history plus the compaction prompt, no tools; again with less history after the provider
// said it does not fit.
void TaskLoop::send_compaction_request(Steps& out) {
  compact_logic_ = std::make_unique<TurnLogic>(spec_.conversation_id, spec_.sub_id);
  request(out, compaction::request_input(compact_history_, compaction::prompt(spec_.config)), {});
}

// The compaction answer arrived: the summary replaces the history, here and in the conversation.
void TaskLoop::finish_compaction(Steps& out) {
  auto items = compact_logic_->take_items();
  compact_logic_.reset();
  if (compact_dropped_ > 0)
    emit(out, BackgroundEvent{fmt::format("Trimmed {} older conversation item(s) before compacting so the prompt "
                                          "fits the model context window.",
                                          compact_dropped_)});
  auto summary = compaction::summary_of(items);
  history_ = rollout::build_compacted_history(
      initial_context(spec_.config), compaction::user_messages(history_), summary,
      compaction::user_message_budget(spec_.config, spec_.model));
  out.push_back(Replace{history_, summary});
  emit(out, AgentMessageEvent{std::string(compaction::kCompletedMessage)});
  emit(out, WarningEvent{std::string(compaction::kAccuracyWarning)});
  if (spec_.compact_only) return finish(out, false);
  send_request(out);  // an automatic compaction continues the task on the new history
}

// --- the model's answers ---------------------------------------------------------------------

void TaskLoop::on_model_events(uint64_t seq, uint32_t attempt, std::vector<ModelEvent>& events, Steps& out) {
  if (done_ || seq != seq_ || attempt <= retired_attempt_) return;
  KeptVector<EventMsgTag, EventMsg, 512> buffer;
  auto& msgs = buffer.items;
  msgs.reserve(2 * events.size());  // a text delta shows as two events
  if (compact_logic_) {
    compact_logic_->on_model_events(events, msgs);  // not the turn's answer: not shown
    if (compact_logic_->response_complete()) finish_compaction(out);
    return;
  }
  logic_.on_model_events(events, msgs, window_);
  emit_all(out, msgs);
  if (logic_.response_complete()) on_response_complete(out);
}

void TaskLoop::on_model_retrying(uint64_t seq, uint32_t attempt, const std::string& message, Steps& out) {
  if (done_ || seq != seq_) return;
  retired_attempt_ = std::max(retired_attempt_, attempt);
  (compact_logic_ ? *compact_logic_ : logic_).reset_response();
  emit(out, StreamErrorEvent{message});
}

void TaskLoop::on_wire_fallback(uint64_t seq, const std::string& reason, Steps& out) {
  if (done_ || seq != seq_ || spec_.model.wire == WireApi::chat) return;
  spec_.model.wire = WireApi::chat;
  spec_.model.wire_note = reason;
  emit(out, WarningEvent{fmt::format("Provider `{}` does not serve the Responses API ({}); llmx uses Chat "
                                     "Completions with it from now on.",
                                     spec_.config.provider.id, reason)});
}

void TaskLoop::on_model_failed(uint64_t seq, const std::string& message, Steps& out) {
  if (done_ || seq != seq_) return;
  if (compact_logic_ && retry::is_context_window_error(message) && compaction::drop_oldest(compact_history_)) {
    ++compact_dropped_;
    return send_compaction_request(out);
  }
  emit(out, ErrorEvent{message});
  finish(out, false);
}

void TaskLoop::on_response_complete(Steps& out) {
  auto finish_reason = logic_.completion().finish_reason;
  emit(out, logic_.token_count(window_));
  std::optional<int64_t> tokens;
  if (logic_.completion().usage) tokens = logic_.completion().usage->total_tokens;
  record(out, logic_.take_items());
  auto calls = logic_.take_calls();
  // Auto-compaction (E14): a response whose usage reached the limit compacts the history once
  // its tool calls ran, and the task goes on from the summary.
  if (auto limit = compaction::auto_limit(spec_.config, spec_.model); limit && tokens && *tokens >= *limit) {
    if (auto_compacted_) {
      emit(out, ErrorEvent{fmt::format("Conversation is still above the token limit after automatic summarization "
                                       "(limit {}, current {}). Please start a new session or trim your input.",
                                       *limit, *tokens)});
      return finish(out, false);
    }
    compact_pending_ = true;
  } else {
    auto_compacted_ = false;
  }
  if (!calls.empty()) {
    calls_.assign(calls.begin(), calls.end());
    return run_next_call(out);
  }
  if (finish_reason == "length")
    emit(out, WarningEvent{std::string(kOutputLimitWarning)});
  else if (finish_reason == "content_filter")
    emit(out, WarningEvent{std::string(kContentFilterWarning)});
  continue_after_tools(false, out);
}

// After a response's tools ran (or there were none): more input or tool results mean another
// request; otherwise the task is done.
void TaskLoop::continue_after_tools(bool had_calls, Steps& out) {
  size_t images = 0;
  for (const auto& input : pending_input_) images += count_images(input);
  // Input added to a running turn keeps its text; its images cannot go to a model without vision.
  if (auto refusal = models::image_refusal(spec_.model, images)) {
    for (auto& input : pending_input_)
      std::erase_if(input, [](const UserInput& i) { return i.is<ImageInput>() || i.is<LocalImageInput>(); });
    std::erase_if(pending_input_, [](const auto& input) { return input.empty(); });
    emit(out, WarningEvent{*refusal + " The images added to the running turn were left out."});
  }
  bool has_input = !pending_input_.empty();
  for (auto& input : pending_input_) {
    std::vector<EventMsg> events;
    auto item = logic_.user_input(input, events);
    emit_all(out, events);
    record(out, {std::move(item)});
  }
  pending_input_.clear();
  if (compact_pending_) {
    // As the reference: the task continues after an automatic compaction even when this
    // response was a final answer.
    compact_pending_ = false;
    auto_compacted_ = true;
    return start_compaction(out);
  }
  if (!had_calls && !has_input) return finish(out, false);
  send_request(out);
}

// --- tool calls: one at a time, in the order the model made them ----------------------------

void TaskLoop::run_next_call(Steps& out) {
  if (done_) return;
  if (calls_.empty()) {
    record(out, std::move(outputs_));
    outputs_ = {};
    return continue_after_tools(true, out);
  }
  flow_ = std::make_unique<ToolFlow>(std::move(calls_.front()), tools_, diffs_);
  calls_.pop_front();
  std::vector<EventMsg> events;
  auto step = flow_->start(events);
  advance(std::move(step), events, out);
}

void TaskLoop::advance(ToolFlow::Step step, std::vector<EventMsg>& events, Steps& out) {
  emit_all(out, events);
  if (auto* ask = std::get_if<ToolFlow::Ask>(&step)) {
    out.push_back(Ask{std::make_unique<ApprovalRequest>(std::move(ask->request)), flow_generation_});
  } else if (auto* run = std::get_if<ToolFlow::Run>(&step)) {
    out.push_back(Run{std::move(run->request), flow_generation_});
  } else if (auto* mcp = std::get_if<ToolFlow::CallMcp>(&step)) {
    out.push_back(CallMcp{std::move(mcp->call), std::move(mcp->client), mcp->timeout_ms, flow_generation_});
  } else if (auto* files = std::get_if<ToolFlow::Files>(&step)) {
    out.push_back(EditFiles{std::move(files->io), flow_generation_});
  } else {
    auto& done = std::get<ToolFlow::Done>(step);
    outputs_.push_back(FunctionCallOutputItem{flow_->call().call_id, std::move(done.output), std::move(done.parts)});
    bool aborted = flow_->aborted();
    flow_.reset();
    ++flow_generation_;
    if (aborted) {
      record(out, std::move(outputs_));
      outputs_ = {};
      return finish(out, true);
    }
    run_next_call(out);
  }
}

void TaskLoop::on_approval(uint64_t generation, const ApprovalReply& reply, Steps& out) {
  if (done_ || generation != flow_generation_ || !flow_) return;
  std::vector<EventMsg> events;
  auto next = flow_->on_approval(reply, events);
  advance(std::move(next), events, out);
}

void TaskLoop::on_exec(uint64_t generation, const ExecDone& done, Steps& out) {
  if (done_ || generation != flow_generation_ || !flow_) return;
  std::vector<EventMsg> events;
  auto next = flow_->on_exec(done, events);
  advance(std::move(next), events, out);
}

void TaskLoop::on_mcp(uint64_t generation, const McpCallResult& result, Steps& out) {
  if (done_ || generation != flow_generation_ || !flow_) return;
  std::vector<EventMsg> events;
  auto next = flow_->on_mcp(result, events);
  advance(std::move(next), events, out);
}

void TaskLoop::on_files(uint64_t generation, const FileIoDone& done, Steps& out) {
  if (done_ || generation != flow_generation_ || !flow_) return;
  std::vector<EventMsg> events;
  auto next = flow_->on_files(done, events);
  advance(std::move(next), events, out);
}

void TaskLoop::on_mcp_progress(std::string message, Steps& out) {
  if (done_ || !flow_) return;
  emit(out, McpToolCallProgressEvent{flow_->call().call_id, std::move(message)});
}

void TaskLoop::on_exec_output(ExecOutput output, Steps& out) {
  if (done_) return;
  auto& counts = delta_counts_[output.call_id];
  auto& n = output.is_stderr ? counts.second : counts.first;
  if (++n > kMaxDeltasPerStream) return;  // live deltas are capped per stream; the capture continues
  emit(out, ExecCommandOutputDeltaEvent{output.call_id, output.is_stderr ? "stderr" : "stdout",
                                        Base64Bytes{std::move(output.bytes)}});
}

void TaskLoop::inject(std::vector<UserInput> input) { pending_input_.push_back(std::move(input)); }

void TaskLoop::interrupt(Steps& out) {
  if (!done_ && flow_ && flow_->in_mcp_call()) {  // the call's item ends too (the server is told)
    std::vector<EventMsg> events;
    flow_->on_mcp(McpCallResult{false, {}, "cancelled: the turn was interrupted"}, events);
    emit_all(out, events);
  }
  finish(out, true);
}

}  // namespace llmx
