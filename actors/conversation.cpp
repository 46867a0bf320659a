#include "actors/conversation.hpp"
#include "protocol/base/votes.hpp"

#include <deque>

#include <fmt/format.h>

#include "actors/approval_broker.hpp"
#include "actors/mcp_tools.hpp"
#include "actors/refusal.hpp"
#include "actors/turn_executor.hpp"
#include "protocol/model/environment_context.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/text.hpp"
#include "protocol/store/rollout.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx {

namespace {

// How long a conversation nobody follows any more stays loaded (a client may come back to it).
constexpr auto kUnattendedUnload = std::chrono::minutes(10);

struct ConversationState {
  ConversationState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  std::string id;
  std::shared_ptr<const Config> config;  // shared with conversations of equal settings
  History history;
  std::vector<event_sink_actor> subscribers;
  uint64_t next_sub = 0;
  std::optional<turn_executor_actor> task;
  approval_broker_actor broker;
  mcp_hub_actor mcp;
  model_registry_actor models;
  conversation_manager_actor manager;  // hears of the first task: a shutdown waits for us from then on
  bool first_task = true;  // the first task reports the MCP servers' start-up
  std::string task_sub_id;
  bool task_compacts = false;      // the running task is a manual compaction (cannot be steered)
  std::vector<size_t> turn_starts;  // history length where each turn began (thread/rollback)
  FileDelegate files;               // the client patches read and write through (ACP fs/*)
  bool shutting_down = false;
  uint64_t releases = 0;  // bumped by every release and subscribe: an unload timer of an older one is void
  // Persistence: every recorded line goes to the store, which writes it off this thread.
  rollout_store_actor store;
  std::string rollout_path;
  bool listable = false;         // the first user message is on record (the thread is listed)
  // A new conversation's file is made with its first user message, as Codex does: until then
  // its lines wait here, so a conversation nobody talks to costs no file and leaves none behind
  // (100,000 idle conversations, issue 18).
  struct Unwritten {
    std::shared_ptr<const Config> config;  // as it was at the start (the session_meta line)
    std::chrono::system_clock::time_point started;
    std::vector<std::string> lines;
  };
  std::optional<Unwritten> unwritten;
  bool rollout_warned = false;   // a write failure was reported to the client once
  // Warnings emitted while nobody listened (a client subscribes after the turn that found the
  // rollout unwritable began, say): told to the first subscriber.
  std::vector<Event> unheard_warnings;
  // Subscribers whose client reads slower than we stream: while any asks, the running turn's
  // model stream is paused (issue 18, back-pressure).
  Votes<caf::actor_addr> pressing;
  static inline const char* name = "llmx.conversation";
};

using conversation_ptr = conversation_actor::stateful_pointer<ConversationState>;

rollout::SessionMeta session_meta_of(const std::string& id, const Config& cfg,
                                     std::chrono::system_clock::time_point started) {
  rollout::SessionMeta meta;
  meta.id = id;
  meta.timestamp = rollout::format_timestamp(started);
  meta.cwd = cfg.cwd;
  if (cfg.user_instructions) meta.instructions = *cfg.user_instructions;
  meta.source = JsonOf<SessionSource>{json::to_json(cfg.session_source)};
  meta.model_provider = cfg.provider.id;
  meta.thread_source = cfg.thread_source;
  return meta;
}

// An append to this conversation's rollout file, for the store.
RolloutAppend append_of(conversation_ptr self, std::vector<std::string> lines, std::optional<std::string> first_user,
                        bool sync) {
  auto& st = self->state;
  RolloutAppend a;
  a.home = st.config->llmx_home;
  a.path = st.rollout_path;
  a.lines = std::move(lines);
  a.first_user_message = std::move(first_user);
  a.sync = sync || st.config->rollout_fsync == "always";
  a.owner = caf::actor_cast<caf::strong_actor_ptr>(self);
  return a;
}

// Makes the file that waited for the first user message: its session_meta line, then the lines
// held back until now.
void write_unwritten(conversation_ptr self, std::optional<std::string> first_user = {}, bool sync = false) {
  auto& st = self->state;
  if (!st.unwritten) return;
  auto a = append_of(self, std::move(st.unwritten->lines), std::move(first_user), sync);
  a.meta = session_meta_of(st.id, *st.unwritten->config, st.unwritten->started);
  self->send(st.store, std::move(a));
  st.unwritten.reset();
}

// Queues lines for this conversation's rollout file.
void persist(conversation_ptr self, std::vector<std::string> lines, std::optional<std::string> first_user = {},
             bool sync = false) {
  auto& st = self->state;
  if (st.rollout_path.empty() || (lines.empty() && !first_user && !sync)) return;
  if (st.unwritten) {
    auto& u = *st.unwritten;
    u.lines.insert(u.lines.end(), std::make_move_iterator(lines.begin()), std::make_move_iterator(lines.end()));
    if (first_user) write_unwritten(self, std::move(first_user), sync);  // else still nothing said: no file yet
    return;
  }
  self->send(st.store, append_of(self, std::move(lines), std::move(first_user), sync));
}

void persist_item(conversation_ptr self, const rollout::RolloutItem& item) {
  persist(self, {rollout::encode_line(std::chrono::system_clock::now(), item)});
}

void emit(conversation_ptr self, std::vector<Event> events, Claim claim = {}) {
  if (events.empty()) return;
  // The persisted subset (engine.md §9.3) is encoded here, before the events move on.
  std::vector<std::string> lines;
  std::optional<std::string> first_user;
  auto now = std::chrono::system_clock::now();
  for (const auto& ev : events) {
    if (!rollout::should_persist(ev.msg)) continue;
    if (auto* um = ev.msg.get_if<UserMessageEvent>(); um && !self->state.listable) {
      self->state.listable = true;
      first_user = um->message;
    }
    lines.push_back(rollout::encode_line(now, rollout::RolloutItem{ev.msg}));
  }
  persist(self, std::move(lines), std::move(first_user));
  auto& subs = self->state.subscribers;
  if (subs.empty())
    for (const auto& ev : events)
      if (ev.msg.is<WarningEvent>()) self->state.unheard_warnings.push_back(ev);
  ConversationEvents batch{self->state.id, std::move(events), std::move(claim)};
  for (size_t i = 0; i + 1 < subs.size(); ++i) self->send(subs[i], batch);
  if (!subs.empty()) self->send(subs.back(), std::move(batch));
}

void emit(conversation_ptr self, Event ev) {
  std::vector<Event> one;
  one.push_back(std::move(ev));
  emit(self, std::move(one));
}

rollout::TurnContext turn_context_of(const Config& cfg) {
  rollout::TurnContext tc;
  tc.cwd = cfg.cwd;
  tc.approval_policy = cfg.approval_policy;
  tc.sandbox_policy = cfg.sandbox_policy;
  tc.model = cfg.model;
  tc.effort = cfg.reasoning_effort;
  tc.summary = cfg.reasoning_summary;
  return tc;
}

// The settings are shared: an override gives this conversation its own copy first.
void override_config(conversation_ptr self, const OverrideTurnContextOp& op) {
  auto own = std::make_shared<Config>(*self->state.config);
  apply_override(*own, op);
  self->state.config = std::move(own);
}

void start_task(conversation_ptr self, const std::string& sub_id, std::vector<UserInput> input,
                bool compact_only = false, std::optional<RawJson> output_schema = std::nullopt,
                std::optional<bool> interactive = std::nullopt) {
  // The broker comes with the first task: an idle conversation (there may be 100,000) has none.
  if (!self->state.broker)
    self->state.broker = spawn_approval_broker(self, caf::actor_cast<conversation_actor>(self),
                                               self->state.config->approval_timeout_ms);
  auto exec = spawn_turn_executor(self, caf::actor_cast<conversation_actor>(self), self->state.broker,
                                  self->state.mcp, self->state.models);
  self->state.task = exec;
  self->state.task_sub_id = sub_id;
  self->state.task_compacts = compact_only;
  self->state.turn_starts.push_back(self->state.history.size());  // as rollout::load counts turns
  persist_item(self, turn_context_of(*self->state.config));
  TaskSpec spec{self->state.id, sub_id, *self->state.config, self->state.history, std::move(input)};
  spec.compact_only = compact_only;
  if (output_schema) spec.config.output_schema = std::move(output_schema);  // this turn's only
  if (interactive) spec.config.interactive_approvals = *interactive;        // this turn's only
  spec.first_task = std::exchange(self->state.first_task, false);
  if (spec.first_task && self->state.manager) self->send(self->state.manager, task_atom::value, self->state.id);
  spec.files = std::exchange(self->state.files, {});  // for this turn only (see FileDelegate)
  self->send(exec, start_atom::value, std::move(spec));
  if (self->state.pressing.any()) send_pause(self, exec, true);
}

// `who` asks to pause (or stops asking); the running task hears when the answer changes.
void press(conversation_ptr self, const caf::actor_addr& who, bool paused) {
  if (auto changed = self->state.pressing.set(who, paused); changed && self->state.task)
    send_pause(self, *self->state.task, *changed);
}

void finish_shutdown(conversation_ptr self) {
  emit(self, Event{self->state.task_sub_id, ShutdownCompleteEvent{}});
  if (!self->state.rollout_path.empty() && !self->state.unwritten) {  // a file never made has nothing to close
    RolloutAppend bye;
    bye.home = self->state.config->llmx_home;
    bye.path = self->state.rollout_path;
    bye.close = true;
    self->send(self->state.store, std::move(bye));
  }
  // Linked helpers ignore a normal exit; tell the broker explicitly so it does not outlive us.
  if (self->state.broker) self->send_exit(self->state.broker, caf::exit_reason::user_shutdown);
  self->quit();
}

// ShutdownOp, or the last client gone: the running task is interrupted first.
void begin_shutdown(conversation_ptr self) {
  auto& st = self->state;
  st.shutting_down = true;
  if (st.task)
    self->send(*st.task, interrupt_atom::value);
  else
    finish_shutdown(self);
}

// The running task is over (TaskDone, or its executor exited without one).
void task_over(conversation_ptr self) {
  self->state.task.reset();
  if (self->state.broker) self->send(self->state.broker, cancel_atom::value);  // nothing may wait for a finished turn
  if (self->state.shutting_down) finish_shutdown(self);
}


// The events an op causes, after the op's reply (DECISIONS P10): they come back through this
// mailbox, behind the reply; anything asked of the conversation later sees them recorded.
void emit_after_reply(conversation_ptr self, Event ev) {
  TurnEvents one;
  one.events.push_back(std::move(ev));
  self->send(caf::actor_cast<conversation_actor>(self), std::move(one));
}

// v2 turn/steer: the input joins the running turn, whose id must be the expected one.
caf::result<std::string> steer_turn(conversation_ptr self, SteerOp op) {
  auto& st = self->state;
  if (!st.task) return refuse(Refusal::request, "no active turn to steer");
  if (op.expected_turn_id != st.task_sub_id)
    return refuse(Refusal::request,
                  fmt::format("expected active turn id `{}` but found `{}`", op.expected_turn_id, st.task_sub_id));
  if (op.items.empty()) return refuse(Refusal::request, "input must not be empty");
  if (st.task_compacts) return refuse(Refusal::request, "the active turn is a compaction and cannot be steered");
  self->send(*st.task, InjectInput{std::move(op.items)});
  return st.task_sub_id;
}

// v2 thread/rollback: the history loses its last turns; the marker goes on record so a resume
// (rollout::load) and the turn list drop them too.
caf::result<std::string> roll_back(conversation_ptr self, const std::string& sub_id, uint32_t n) {
  auto& st = self->state;
  if (n == 0) return refuse(Refusal::request, "num_turns must be >= 1");
  if (st.task) return refuse(Refusal::request, "Cannot rollback while a turn is in progress.");
  if (st.rollout_path.empty()) return refuse(Refusal::request, "thread rollback requires persisted thread history");
  // A compaction summarised the turns before it: they cannot come back one by one, so a rollback
  // stops there. The marker records the turns really dropped, so every reader drops the same.
  n = static_cast<uint32_t>(std::min<size_t>(n, st.turn_starts.size()));
  if (n == 0) return refuse(Refusal::request, "no turn to roll back since the thread was last compacted");
  rollout::drop_last_turns(st.history, st.turn_starts, n);
  emit_after_reply(self, Event{sub_id, ThreadRolledBackEvent{n}});
  return sub_id;
}

caf::result<std::string> set_name(conversation_ptr self, const std::string& sub_id, std::string_view name) {
  auto& st = self->state;
  auto trimmed = text::trim_view(name);
  if (trimmed.empty()) return refuse(Refusal::request, "thread name must not be empty");
  if (st.rollout_path.empty()) return refuse(Refusal::request, "Session persistence is disabled; cannot rename thread.");
  emit_after_reply(self, Event{sub_id, ThreadNameUpdatedEvent{st.id, std::string(trimmed)}});
  write_unwritten(self);  // the store keeps the title with the thread's record, made with its file
  RolloutAppend a;  // after the event's line: the listing shows the title
  a.home = st.config->llmx_home;
  a.path = st.rollout_path;
  a.name = std::string(trimmed);
  self->send(st.store, std::move(a));
  return sub_id;
}

conversation_actor::behavior_type conversation_impl(conversation_ptr self, ConversationStart start) {
  auto& st0 = self->state;
  st0.id = std::move(start.id);
  st0.config = std::move(start.config);
  st0.store = std::move(start.store);
  st0.rollout_path = std::move(start.rollout_path);
  st0.mcp = std::move(start.mcp);
  st0.models = std::move(start.models);
  st0.manager = std::move(start.manager);
  // Configured MCP servers start now, while the user types; the first task waits for them.
  if (!st0.config->mcp_servers.empty() && st0.mcp)
    self->request(st0.mcp, caf::infinite, McpConnect{st0.config->mcp_servers}).then([](const McpServers&) {});
  if (start.resumed && !start.resumed->path.empty()) {
    st0.history = std::move(start.resumed->history);
    st0.turn_starts = std::move(start.resumed->turn_starts);
    st0.listable = start.resumed->has_user_message;
  } else {
    st0.history = initial_context(*st0.config);
    if (!st0.rollout_path.empty())  // the file waits for the first user message (see `unwritten`)
      st0.unwritten = ConversationState::Unwritten{st0.config, std::chrono::system_clock::now(), {}};
    if (start.resumed && !start.resumed->lines.empty()) {  // a fork of a stored thread: its lines, copied
      st0.history = std::move(start.resumed->history);
      st0.turn_starts = std::move(start.resumed->turn_starts);
      st0.listable = start.resumed->first_user_message.has_value();
      persist(self, std::move(start.resumed->lines), std::move(start.resumed->first_user_message));
    } else if (start.resumed) {  // a fork of given items: they follow the initial context, on record
      std::vector<std::string> lines;
      auto now = std::chrono::system_clock::now();
      for (auto& item : start.resumed->history) {
        if (rollout::should_persist(item)) lines.push_back(rollout::encode_line(now, rollout::RolloutItem{item}));
        if (!st0.listable && rollout::is_user_turn_message(item)) {
          st0.listable = true;
          persist(self, std::move(lines), item.get_if<MessageItem>()->text());
          lines.clear();
        }
        st0.history.push_back(std::move(item));
      }
      persist(self, std::move(lines));
    }
  }
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& subs = self->state.subscribers;
    subs.erase(std::remove_if(subs.begin(), subs.end(),
                              [&](const event_sink_actor& s) { return s.address() == dm.source; }),
               subs.end());
    press(self, dm.source, false);
  });
  // A crashed turn executor (linked) must not take the conversation down: report and go on.
  // (An executor that reported TaskDone is no longer the task: its normal exit is ignored below.)
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (self->state.task && em.source == self->state.task->address()) {
      auto sub = self->state.task_sub_id;
      task_over(self);
      if (em.reason) {
        emit(self, Event{sub, ErrorEvent{"internal error: the turn ended unexpectedly: " +
                                          self->system().render(em.reason)}});
        emit(self, Event{sub, TaskCompleteEvent{}});
      }
      return;
    }
    if (em.reason) self->quit(em.reason);
  });
  return {
      [=](submit_atom, Submission& sub) -> caf::result<std::string> {
        auto& st = self->state;
        if (sub.id.empty()) sub.id = std::to_string(st.next_sub++);
        if (st.shutting_down) {
          if (sub.op.is<SteerOp>() || sub.op.is<ThreadRollbackOp>() || sub.op.is<SetThreadNameOp>())
            return refuse(Refusal::request, "the thread is shutting down");
          return std::string();  // refused: nothing would run it
        }
        if (auto* steer = sub.op.get_if<SteerOp>()) return steer_turn(self, std::move(*steer));
        if (auto* back = sub.op.get_if<ThreadRollbackOp>()) return roll_back(self, sub.id, back->num_turns);
        if (auto* name = sub.op.get_if<SetThreadNameOp>()) return set_name(self, sub.id, name->name);
        if (auto* in = sub.op.get_if<UserInputOp>()) {
          if (in->items.empty()) return refuse(Refusal::request, "input must not be empty");  // no turn would follow
          if (st.task && in->exclusive.value_or(false)) {  // busy: refused
            st.files = {};
            return std::string();
          }
          if (st.task)
            self->send(*st.task, InjectInput{std::move(in->items)});
          else
            start_task(self, sub.id, std::move(in->items), false, std::nullopt, in->interactive);
          st.files = {};  // a file delegate came for a turn of its own: none started, none kept
        } else if (auto* turn = sub.op.get_if<UserTurnOp>()) {
          override_config(self, OverrideTurnContextOp{turn->cwd, turn->approval_policy, turn->sandbox_policy,
                                                      turn->model, turn->effort, turn->summary});
          if (turn->items.empty()) return refuse(Refusal::request, "input must not be empty");
          std::optional<RawJson> schema;
          if (!turn->final_output_json_schema.text.empty() && turn->final_output_json_schema.text != "null")
            schema = turn->final_output_json_schema;
          if (st.task)
            self->send(*st.task, InjectInput{std::move(turn->items)});
          else
            start_task(self, sub.id, std::move(turn->items), false, std::move(schema));
        } else if (auto* o = sub.op.get_if<OverrideTurnContextOp>()) {
          override_config(self, *o);
        } else if (auto* ea = sub.op.get_if<ExecApprovalOp>()) {
          self->send(st.broker, ApprovalAnswer{ea->id, ea->decision});
        } else if (auto* pa = sub.op.get_if<PatchApprovalOp>()) {
          self->send(st.broker, ApprovalAnswer{pa->id, pa->decision});
        } else if (auto* re = sub.op.get_if<ResolveElicitationOp>()) {
          auto decision = re->decision == "accept"   ? ReviewDecision::approved
                          : re->decision == "cancel" ? ReviewDecision::abort
                                                     : ReviewDecision::denied;
          self->send(st.broker, ApprovalAnswer{re->request_id, decision, std::move(re->content)});
        } else if (sub.op.is<ListMcpToolsOp>()) {
          auto id = sub.id;
          if (st.config->mcp_servers.empty() || !st.mcp) {
            emit(self, Event{id, McpListToolsResponseEvent{}});
          } else {
            auto configs = st.config->mcp_servers;
            self->request(st.mcp, caf::infinite, McpConnect{configs})
                .then([=](const McpServers& servers) { emit(self, Event{id, McpTools(servers, configs).listing()}); },
                      [=](caf::error&) { emit(self, Event{id, McpListToolsResponseEvent{}}); });
          }
        } else if (sub.op.is<CompactOp>()) {
          // A running task compacts on its own when it needs to; a manual compact waits for
          // nothing and runs as its own task.
          if (!st.task) start_task(self, sub.id, {}, true);
        } else if (sub.op.is<InterruptOp>()) {
          if (st.task) self->send(*st.task, interrupt_atom::value);
        } else if (sub.op.is<ShutdownOp>()) {
          begin_shutdown(self);
        }
        return sub.id;
      },
      [=](subscribe_atom, event_sink_actor& sink) {
        auto& subs = self->state.subscribers;
        for (auto& s : subs)
          if (s == sink) return;  // subscribing twice must not duplicate or split (P7)
        self->monitor(sink);
        subs.push_back(std::move(sink));
        ++self->state.releases;  // a client came back: no unload
        if (!self->state.unheard_warnings.empty())
          self->send(subs.back(), ConversationEvents{self->state.id, std::exchange(self->state.unheard_warnings, {})});
      },
      [=](FileDelegate& d) { self->state.files = std::move(d); },
      [=](status_atom) -> std::string { return self->state.task ? self->state.task_sub_id : std::string(); },
      [=](sync_atom) -> bool {
        write_unwritten(self);
        return !self->state.rollout_path.empty();
      },
      [=](interrupt_atom) -> bool {
        if (!self->state.task) return false;
        self->send(*self->state.task, interrupt_atom::value);
        return true;
      },
      [=](unsubscribe_atom, event_sink_actor& sink) {
        auto& subs = self->state.subscribers;
        subs.erase(std::remove(subs.begin(), subs.end(), sink), subs.end());
        press(self, sink.address(), false);
      },
      [=](pause_atom, bool paused) {
        press(self, caf::actor_cast<caf::actor_addr>(self->current_sender()), paused);
      },
      [=](release_atom, event_sink_actor& sink) {
        auto& st = self->state;
        auto& subs = st.subscribers;
        subs.erase(std::remove(subs.begin(), subs.end(), sink), subs.end());
        press(self, sink.address(), false);
        if (!subs.empty() || st.shutting_down) return;
        if (st.task) self->send(*st.task, interrupt_atom::value);
        self->delayed_send(self, kUnattendedUnload, release_atom::value, ++st.releases);
      },
      [=](release_atom, uint64_t release) {
        auto& st = self->state;
        if (release != st.releases || !st.subscribers.empty() || st.shutting_down) return;
        if (st.task) {  // still ending its interrupted turn: look again later
          self->delayed_send(self, std::chrono::seconds(1), release_atom::value, st.releases);
          return;
        }
        begin_shutdown(self);
      },
      [=](TurnEvents& batch) { emit(self, std::move(batch.events), std::move(batch.claim)); },
      [=](RecordItems& rec) {
        std::vector<std::string> lines;
        auto now = std::chrono::system_clock::now();
        for (const auto& item : rec.items)
          if (rollout::should_persist(item)) lines.push_back(rollout::encode_line(now, rollout::RolloutItem{item}));
        persist(self, std::move(lines));
        self->state.history.append(std::move(rec.items));
      },
      [=](ReplaceHistory& rh) {
        persist_item(self, rollout::Compacted{rh.summary});
        self->state.history = std::move(rh.items);
        self->state.turn_starts.clear();  // as rollout::load does at a compacted line
      },
      [=](RolloutFailed& f) {
        auto& st = self->state;
        if (st.rollout_warned) return;
        st.rollout_warned = true;
        emit(self, Event{st.task_sub_id, WarningEvent{fmt::format(
                                              "This conversation could not be saved ({}); it will not be "
                                              "resumable from {}.",
                                              f.message, f.path)}});
      },
      [=](TaskDone& done) {
        auto& st = self->state;
        if (st.config->rollout_fsync == "turn") persist(self, {}, {}, true);
        // The task is over now, not when its executor's exit arrives: an op the client sends on
        // seeing task_complete (a compact, the next message) must start the next task, not be
        // lost on an executor that is quitting. Its exit is then ignored.
        if (st.task && done.sub_id == st.task_sub_id) task_over(self);
      },
  };
}

}  // namespace

conversation_actor spawn_conversation(caf::local_actor* parent, ConversationStart start) {
  return parent->spawn(conversation_impl, std::move(start));
}

}  // namespace llmx
