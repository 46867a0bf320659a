#include "actors/turn_executor.hpp"

#include <fmt/format.h>

#include <deque>

#include "actors/compaction.hpp"
#include "actors/exec_sandbox.hpp"
#include "actors/model_streamer.hpp"
#include "actors/tool_flow.hpp"
#include "actors/turn_logic.hpp"
#include "protocol/model/tools.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/sandbox_policy.hpp"
#include "protocol/model/environment_context.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/store/rollout.hpp"

namespace llmx {

struct TurnExecutorState {
  TurnExecutorState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  conversation_actor conversation;
  TaskSpec spec;
  std::vector<ResponseItem> history;  // what the next request sends
  std::vector<std::vector<UserInput>> pending_input;
  std::unique_ptr<TurnLogic> logic;
  std::optional<model_streamer_actor> streamer;
  uint64_t seq = 0;
  bool done = false;
  std::vector<Event> outbox;  // events of the current message, sent as one batch
  // Tools: calls of the last response still to run (in order), the one running, its outputs.
  approval_broker_actor broker;
  std::optional<exec_sandbox_actor> exec;
  ToolContext tools;
  patch::TurnDiffTracker diffs;
  std::deque<FunctionCallItem> calls;
  std::unique_ptr<ToolFlow> flow;
  uint64_t flow_generation = 0;  // replies for an earlier flow are stale
  std::vector<ResponseItem> outputs;
  std::map<std::string, std::pair<size_t, size_t>> delta_counts;  // per call: stdout, stderr chunks
  // Compaction in progress: its own bookkeeping (its output is not shown as the turn's), the
  // history it summarises (shrunk when the provider says it does not fit) and what it dropped.
  std::unique_ptr<TurnLogic> compact_logic;
  std::vector<ResponseItem> compact_history;
  size_t compact_dropped = 0;
  bool auto_compacted = false;  // the last response triggered an auto-compaction
  bool compact_pending = false;  // compact before the next request
  static inline const char* name = "llmx.turn_executor";
};

namespace {

using executor_ptr = turn_executor_actor::stateful_pointer<TurnExecutorState>;

void emit(executor_ptr self, EventMsg msg) {
  self->state.outbox.push_back(Event{self->state.spec.sub_id, std::move(msg)});
}

// Sends what this message produced; called before anything else goes to the conversation so
// the conversation sees events and records in the order they happened.
void flush(executor_ptr self) {
  auto& st = self->state;
  if (st.outbox.empty()) return;
  self->send(st.conversation, std::move(st.outbox));
  st.outbox = {};
}

void emit_all(executor_ptr self, std::vector<EventMsg>& msgs) {
  for (auto& m : msgs) emit(self, std::move(m));
  msgs.clear();
}

// Appends items to the task's history and the conversation's, announcing each.
void record(executor_ptr self, std::vector<ResponseItem> items) {
  if (items.empty()) return;
  for (const auto& it : items) {
    self->state.history.push_back(it);
    emit(self, RawResponseItemEvent{it});
  }
  flush(self);
  self->send(self->state.conversation, RecordItems{std::move(items)});
}

void end_task(executor_ptr self, bool aborted) {
  auto& st = self->state;
  if (st.done) return;
  st.done = true;
  if (st.streamer) self->send(*st.streamer, cancel_atom::value);
  // Linked helpers ignore a normal exit: end the command runner explicitly (kills children).
  if (st.exec) self->send_exit(*st.exec, caf::exit_reason::user_shutdown);
  if (aborted)
    emit(self, TurnAbortedEvent{TurnAbortReason::interrupted});
  else if (st.spec.compact_only)
    emit(self, TaskCompleteEvent{});
  else
    emit(self, TaskCompleteEvent{st.logic->last_agent_message()});
  flush(self);
  self->send(st.conversation, TaskDone{st.spec.sub_id, aborted});
  self->quit();
}

// Streams one model request with this input and these tools; its events come back tagged with
// the new sequence number.
void request_model(executor_ptr self, std::vector<ResponseItem> input, std::vector<ToolSpec> tools) {
  auto& st = self->state;
  ModelRequest req;
  req.seq = ++st.seq;
  req.prompt = base_prompt(st.spec.config, st.spec.conversation_id);
  req.prompt.input = std::move(input);
  req.prompt.tools = std::move(tools);
  req.provider = st.spec.config.provider;
  req.call_id_prefix = fmt::format("call_{}_{}", st.spec.sub_id, st.seq);
  req.user_agent = user_agent();
  st.streamer = spawn_model_streamer(self, caf::actor_cast<turn_executor_actor>(self), std::move(req));
}

void send_request(executor_ptr self) { request_model(self, self->state.history, tools::default_tools()); }

void continue_after_tools(executor_ptr self, bool had_calls);

// Starts (or, after the provider refused the size, restarts) a compaction request: the history
// plus the compaction prompt, no tools (engine.md §1.12).
void send_compaction_request(executor_ptr self) {
  auto& st = self->state;
  st.compact_logic = std::make_unique<TurnLogic>(st.spec.conversation_id, st.spec.sub_id);
  request_model(self, compaction::request_input(st.compact_history, compaction::prompt(st.spec.config)), {});
}

void start_compaction(executor_ptr self) {
  auto& st = self->state;
  st.compact_history = st.history;
  st.compact_dropped = 0;
  send_compaction_request(self);
}

// The compaction answer arrived: the summary replaces the history, here and in the conversation.
void finish_compaction(executor_ptr self) {
  auto& st = self->state;
  auto items = st.compact_logic->take_items();
  st.compact_logic.reset();
  st.streamer.reset();
  if (st.compact_dropped > 0)
    emit(self, BackgroundEvent{fmt::format("Trimmed {} older conversation item(s) before compacting so the prompt "
                                           "fits the model context window.",
                                           st.compact_dropped)});
  auto summary = compaction::summary_of(items);
  st.history = rollout::build_compacted_history(initial_context(st.spec.config),
                                                compaction::user_messages(st.history), summary);
  flush(self);
  self->send(st.conversation, ReplaceHistory{st.history, summary});
  emit(self, AgentMessageEvent{std::string(compaction::kCompletedMessage)});
  emit(self, WarningEvent{std::string(compaction::kAccuracyWarning)});
  if (st.spec.compact_only) return end_task(self, false);
  send_request(self);  // an automatic compaction continues the task on the new history
}

void run_next_call(executor_ptr self);

// Carries out one step of the running tool flow.
void advance(executor_ptr self, ToolFlow::Step step, std::vector<EventMsg>& events) {
  auto& st = self->state;
  emit_all(self, events);
  auto generation = st.flow_generation;
  auto stale = [self, generation] { return self->state.done || self->state.flow_generation != generation; };
  if (auto* ask = std::get_if<ToolFlow::Ask>(&step)) {
    flush(self);
    self->request(st.broker, caf::infinite, std::move(ask->request))
        .then(
            [=](ApprovalReply& reply) {
              if (stale()) return;
              std::vector<EventMsg> ev;
              auto next = self->state.flow->on_approval(reply, ev);
              advance(self, std::move(next), ev);
              flush(self);
            },
            [=](caf::error&) {
              if (stale()) return;
              std::vector<EventMsg> ev;
              auto next = self->state.flow->on_approval(ApprovalReply{ReviewDecision::denied, "approvals unavailable"}, ev);
              advance(self, std::move(next), ev);
              flush(self);
            });
  } else if (auto* run = std::get_if<ToolFlow::Run>(&step)) {
    flush(self);
    if (!st.exec) st.exec = spawn_exec_sandbox(self, caf::actor_cast<turn_executor_actor>(self));
    auto call_id = run->request.call_id;
    self->request(*st.exec, caf::infinite, std::move(run->request))
        .then(
            [=](ExecDone& done) {
              if (stale()) return;
              std::vector<EventMsg> ev;
              auto next = self->state.flow->on_exec(done, ev);
              advance(self, std::move(next), ev);
              flush(self);
            },
            [=](caf::error& err) {
              if (stale()) return;
              ExecDone failed;
              failed.call_id = call_id;
              failed.spawn_error = self->system().render(err);
              std::vector<EventMsg> ev;
              auto next = self->state.flow->on_exec(failed, ev);
              advance(self, std::move(next), ev);
              flush(self);
            });
  } else {
    auto& done = std::get<ToolFlow::Done>(step);
    st.outputs.push_back(FunctionCallOutputItem{st.flow->call().call_id, std::move(done.output)});
    bool aborted = st.flow->aborted();
    st.flow.reset();
    ++st.flow_generation;
    if (aborted) {
      record(self, std::move(st.outputs));
      st.outputs = {};
      return end_task(self, true);
    }
    run_next_call(self);
  }
}

// Tool calls run one at a time, in the order the model made them.
void run_next_call(executor_ptr self) {
  auto& st = self->state;
  if (st.done) return;
  if (st.calls.empty()) {
    record(self, std::move(st.outputs));
    st.outputs = {};
    return continue_after_tools(self, true);
  }
  st.flow = std::make_unique<ToolFlow>(std::move(st.calls.front()), st.tools, st.diffs);
  st.calls.pop_front();
  std::vector<EventMsg> events;
  auto step = st.flow->start(events);
  advance(self, std::move(step), events);
}

void on_response_complete(executor_ptr self) {
  auto& st = self->state;
  auto& logic = *st.logic;
  auto finish_reason = logic.completion().finish_reason;
  emit(self, logic.token_count(st.spec.config.model_context_window));
  std::optional<int64_t> tokens;
  if (logic.completion().usage) tokens = logic.completion().usage->total_tokens;
  record(self, logic.take_items());
  auto calls = logic.take_calls();
  st.streamer.reset();
  // Auto-compaction (E14): a response whose usage reached the limit compacts the history once
  // its tool calls ran, and the task goes on from the summary.
  if (auto limit = compaction::auto_limit(st.spec.config); limit && tokens && *tokens >= *limit) {
    if (st.auto_compacted) {
      emit(self, ErrorEvent{fmt::format("Conversation is still above the token limit after automatic summarization "
                                        "(limit {}, current {}). Please start a new session or trim your input.",
                                        *limit, *tokens)});
      return end_task(self, false);
    }
    st.compact_pending = true;
  } else {
    st.auto_compacted = false;
  }
  if (!calls.empty()) {
    st.calls.assign(calls.begin(), calls.end());
    return run_next_call(self);
  }
  if (finish_reason == "length") {
    emit(self, WarningEvent{"The model stopped because it reached its output token limit; the answer may be "
                            "incomplete."});
  } else if (finish_reason == "content_filter") {
    emit(self, WarningEvent{"The provider's content filter stopped the answer."});
  }
  continue_after_tools(self, false);
}

// After a response's tools ran (or there were none): more input or tool results mean another
// request; otherwise the task is done.
void continue_after_tools(executor_ptr self, bool had_calls) {
  auto& st = self->state;
  auto& logic = *st.logic;
  bool has_input = !st.pending_input.empty();
  for (auto& input : st.pending_input) {
    std::vector<EventMsg> out;
    auto item = logic.user_input(input, out);
    emit_all(self, out);
    record(self, {std::move(item)});
  }
  st.pending_input.clear();
  if (st.compact_pending) {
    // As the reference: the task continues after an automatic compaction even when this
    // response was a final answer.
    st.compact_pending = false;
    st.auto_compacted = true;
    return start_compaction(self);
  }
  if (!had_calls && !has_input) return end_task(self, false);
  send_request(self);
}

turn_executor_actor::behavior_type turn_executor_impl(executor_ptr self, conversation_actor conversation,
                                                     approval_broker_actor broker) {
  self->state.conversation = std::move(conversation);
  self->state.broker = std::move(broker);
  return {
      [=](start_atom, TaskSpec& spec) {
        auto& st = self->state;
        st.spec = std::move(spec);
        st.history = std::move(st.spec.history);
        st.logic = std::make_unique<TurnLogic>(st.spec.conversation_id, st.spec.sub_id);
        const auto& cfg = st.spec.config;
        st.tools.sub_id = st.spec.sub_id;
        st.tools.cwd = cfg.cwd;
        st.tools.approval = cfg.approval_policy;
        st.tools.sandbox = cfg.sandbox_policy;
        st.tools.can_ask = cfg.interactive_approvals;
        const auto& ep = cfg.shell_environment_policy;
        sandbox::ShellEnvironmentPolicy env_policy{ep.inherit, ep.ignore_default_excludes, ep.exclude, ep.set,
                                                   ep.include_only};
        st.tools.base_env = sandbox::build_child_env(env_policy, sandbox::current_process_env(), false);
        st.tools.allow_git_writes = cfg.allow_git_writes;
        st.tools.llmx_home = cfg.llmx_home;
        st.tools.fallback_with_approval = cfg.sandbox_fallback == "unsandboxed-with-approval";
        if (cfg.sandbox_policy.mode != SandboxMode::danger_full_access) {
          const auto& support = sandbox::probe();  // cached after the first call
          st.tools.sandbox_available = support.complete();
          st.tools.sandbox_summary = support.summary;
        }
        emit(self, TaskStartedEvent{st.spec.config.model_context_window});
        if (st.spec.compact_only) {
          flush(self);
          return start_compaction(self);
        }
        std::vector<EventMsg> out;
        auto item = st.logic->user_input(st.spec.input, out);
        record(self, {std::move(item)});
        emit_all(self, out);
        flush(self);
        send_request(self);
      },
      [=](interrupt_atom) { end_task(self, true); },
      [=](InjectInput& in) { self->state.pending_input.push_back(std::move(in.items)); },
      [=](ModelEvents& batch) {
        auto& st = self->state;
        if (st.done || batch.seq != st.seq) return;
        std::vector<EventMsg> out;
        if (st.compact_logic) {
          st.compact_logic->on_model_events(batch.events, out);  // not the turn's answer: not shown
          if (st.compact_logic->response_complete()) finish_compaction(self);
          flush(self);
          return;
        }
        st.logic->on_model_events(batch.events, out, st.spec.config.model_context_window);
        emit_all(self, out);
        if (st.logic->response_complete()) on_response_complete(self);
        flush(self);
      },
      [=](ModelRetrying& r) {
        auto& st = self->state;
        if (st.done || r.seq != st.seq) return;
        (st.compact_logic ? st.compact_logic : st.logic)->reset_response();
        emit(self, StreamErrorEvent{r.message});
        flush(self);
      },
      [=](ExecOutput& out) {
        auto& st = self->state;
        if (st.done) return;
        auto& counts = st.delta_counts[out.call_id];
        auto& n = out.is_stderr ? counts.second : counts.first;
        if (++n > 10000) return;  // live deltas are capped per stream; the capture continues
        emit(self, ExecCommandOutputDeltaEvent{out.call_id, out.is_stderr ? "stderr" : "stdout",
                                               Base64Bytes{std::move(out.bytes)}});
        flush(self);
      },
      [=](ModelFailed& f) {
        auto& st = self->state;
        if (st.done || f.seq != st.seq) return;
        st.streamer.reset();
        if (st.compact_logic && compaction::is_context_window_error(f.message) &&
            compaction::drop_oldest(st.compact_history)) {
          ++st.compact_dropped;
          return send_compaction_request(self);
        }
        emit(self, ErrorEvent{f.message});
        end_task(self, false);
      },
  };
}

}  // namespace

turn_executor_actor spawn_turn_executor(caf::local_actor* parent, conversation_actor conversation,
                                        approval_broker_actor broker) {
  return parent->spawn<caf::linked>(turn_executor_impl, std::move(conversation), std::move(broker));
}

}  // namespace llmx
