#include "actors/turn_executor.hpp"

#include <fmt/format.h>

#include "actors/exec_sandbox.hpp"
#include "actors/model_streamer.hpp"
#include "actors/task_loop.hpp"
#include "protocol/base/thread_kept.hpp"
#include "protocol/model/tools.hpp"
#include "protocol/rpc/mcp_client_api.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx {

// The executor only wires a TaskLoop (actors/task_loop.hpp) to the actors around it: it carries
// out the loop's steps and feeds back what comes in.
struct TurnExecutorState {
  TurnExecutorState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  conversation_actor conversation;
  approval_broker_actor broker;
  mcp_hub_actor mcp;
  model_registry_actor models;
  std::unique_ptr<TaskLoop> loop;
  bool interrupted = false;  // before the loop started (while MCP servers were starting)
  // The MCP call in flight: its client and key, to cancel it on interrupt.
  std::optional<std::pair<mcp_client_actor, std::string>> mcp_call;
  uint64_t mcp_calls = 0;
  bool can_ask = true;  // someone can answer approvals and elicitations (not `llmx exec`)
  std::optional<model_streamer_actor> streamer;
  bool paused = false;  // the conversation's clients cannot keep up: model streams stop reading
  std::optional<exec_sandbox_actor> exec;
  std::string sub_id;
  FileDelegate files;  // the client patches read and write through, when set
  std::vector<Event> outbox;  // events of the current message, sent as one batch
  Claim claim;  // of the model events being handled: goes with their first batch
  std::vector<std::vector<UserInput>> early_input;  // injected before the loop started
  static inline const char* name = "llmx.turn_executor";
};

namespace {

using executor_ptr = turn_executor_actor::stateful_pointer<TurnExecutorState>;

// What a tool call may do in this task: the config's policies, the child environment and the
// sandbox this machine can give.
ToolContext tool_context(const TaskSpec& spec) {
  const auto& cfg = spec.config;
  ToolContext tools;
  tools.sub_id = spec.sub_id;
  tools.cwd = cfg.cwd;
  tools.approval = cfg.approval_policy;
  tools.sandbox = cfg.sandbox_policy;
  tools.can_ask = cfg.interactive_approvals;
  tools.base_env = sandbox::child_env(cfg.shell_environment_policy, false);  // the network flag is per call
  tools.allow_git_writes = cfg.allow_git_writes;
  tools.llmx_home = cfg.llmx_home;
  tools.fallback_with_approval = cfg.sandbox_fallback == "unsandboxed-with-approval";
  tools.file_tools = tools::enabled_file_tools(cfg);
  tools.files_through_client = static_cast<bool>(spec.files.client);
  if (cfg.sandbox_policy.mode != SandboxMode::danger_full_access) {
    const auto& support = sandbox::probe();  // cached after the first call
    tools.sandbox_available = support.complete();
    tools.sandbox_summary = support.summary;
  }
  return tools;
}

// Sends the events gathered so far; called before anything else goes to the conversation so it
// sees events and records in the order they happened.
void flush(executor_ptr self) {
  auto& st = self->state;
  if (st.outbox.empty()) return;
  self->send(st.conversation, TurnEvents{std::move(st.outbox), std::move(st.claim)});
  st.outbox = {};
  st.claim = {};
}

void carry_out(executor_ptr self, TaskLoop::Steps& steps);

// The steps of one input to the loop, in a vector its thread keeps.
struct StepTag {};
using StepBuffer = KeptVector<StepTag, TaskLoop::Step, 256>;

// The answers of the broker and the exec sandbox go back into the loop.
template <class Answer>
void feed(executor_ptr self, void (TaskLoop::*on)(uint64_t, const Answer&, TaskLoop::Steps&), uint64_t generation,
          const Answer& answer) {
  StepBuffer buffer;
  auto& steps = buffer.items;
  ((*self->state.loop).*on)(generation, answer, steps);
  carry_out(self, steps);
}

void carry_out(executor_ptr self, TaskLoop::Steps& steps) {
  auto& st = self->state;
  st.outbox.reserve(st.outbox.size() + steps.size());  // one allocation per batch, not log2(deltas)
  for (auto& step : steps) {
    if (auto* e = std::get_if<TaskLoop::Emit>(&step)) {
      st.outbox.emplace_back(st.sub_id, std::move(e->msg));
    } else if (auto* r = std::get_if<TaskLoop::Record>(&step)) {
      flush(self);
      self->send(st.conversation, RecordItems{std::move(r->items)});
    } else if (auto* h = std::get_if<TaskLoop::Replace>(&step)) {
      flush(self);
      self->send(st.conversation, ReplaceHistory{std::move(h->history), std::move(h->summary)});
    } else if (auto* q = std::get_if<TaskLoop::Request>(&step)) {
      st.streamer = spawn_model_streamer(self, caf::actor_cast<turn_executor_actor>(self), std::move(*q->request));
      if (st.paused) send_pause(self, *st.streamer, true);
    } else if (auto* a = std::get_if<TaskLoop::Ask>(&step)) {
      flush(self);
      auto generation = a->generation;
      self->request(st.broker, caf::infinite, std::move(*a->request))
          .then([=](ApprovalReply& reply) { feed(self, &TaskLoop::on_approval, generation, reply); },
                [=](caf::error&) {
                  feed(self, &TaskLoop::on_approval, generation,
                       ApprovalReply{ReviewDecision::denied, "approvals unavailable", std::nullopt});
                });
    } else if (auto* run = std::get_if<TaskLoop::Run>(&step)) {
      flush(self);
      if (!st.exec) st.exec = spawn_exec_sandbox(self, caf::actor_cast<turn_executor_actor>(self));
      auto generation = run->generation;
      auto call_id = run->request.call_id;
      self->request(*st.exec, caf::infinite, std::move(run->request))
          .then([=](ExecDone& done) { feed(self, &TaskLoop::on_exec, generation, done); },
                [=](caf::error& err) {
                  ExecDone failed;
                  failed.call_id = call_id;
                  failed.spawn_error = self->system().render(err);
                  feed(self, &TaskLoop::on_exec, generation, failed);
                });
    } else if (auto* m = std::get_if<TaskLoop::CallMcp>(&step)) {
      flush(self);
      auto generation = m->generation;
      auto client = caf::actor_cast<mcp_client_actor>(m->client);
      m->call.key = fmt::format("{}/{}", self->id(), ++st.mcp_calls);
      m->call.caller = caf::actor_cast<caf::strong_actor_ptr>(self);
      st.mcp_call.emplace(client, m->call.key);
      // The client answers within the tool timeout; the margin covers a client that died.
      self->request(client, std::chrono::milliseconds(m->timeout_ms) + std::chrono::seconds(15), std::move(m->call))
          .then(
              [=](McpCallResult& result) {
                self->state.mcp_call.reset();
                feed(self, &TaskLoop::on_mcp, generation, result);
              },
              [=](caf::error& err) {
                self->state.mcp_call.reset();
                feed(self, &TaskLoop::on_mcp, generation,
                     McpCallResult{false, {}, "the MCP client stopped: " + self->system().render(err)});
              });
    } else if (auto* io = std::get_if<TaskLoop::EditFiles>(&step)) {
      flush(self);
      auto generation = io->generation;
      io->io.session_id = st.files.session_id;
      // Bounded: an editor that never answers must not hold the turn forever.
      self->request(caf::actor_cast<session_actor>(st.files.client), std::chrono::seconds(60), std::move(io->io))
          .then([=](FileIoDone& done) { feed(self, &TaskLoop::on_files, generation, done); },
                [=](caf::error& err) {
                  FileIoDone failed;
                  failed.errors["*"] = "the client did not answer: " + self->system().render(err);
                  feed(self, &TaskLoop::on_files, generation, failed);
                });
    } else if (auto* f = std::get_if<TaskLoop::Finish>(&step)) {
      if (st.streamer) self->send(*st.streamer, cancel_atom::value);
      if (st.mcp_call) self->send(st.mcp_call->first, cancel_atom::value, st.mcp_call->second);
      // Linked helpers ignore a normal exit: end the command runner explicitly (kills children).
      if (st.exec) self->send_exit(*st.exec, caf::exit_reason::user_shutdown);
      flush(self);
      self->send(st.conversation, TaskDone{st.sub_id, f->aborted});
      self->quit();
      return;
    }
  }
  flush(self);
}

// Starts the loop once the task's tools are known.
void begin(executor_ptr self, TaskSpec spec, ToolContext tools) {
  self->state.loop = std::make_unique<TaskLoop>(std::move(spec), std::move(tools));
  for (auto& input : std::exchange(self->state.early_input, {})) self->state.loop->inject(std::move(input));
  StepBuffer buffer;
  auto& steps = buffer.items;
  // Interrupted while MCP servers were starting: the task ends before its first request.
  if (self->state.interrupted)
    self->state.loop->interrupt(steps);
  else
    self->state.loop->start(steps);
  carry_out(self, steps);
}

// The task's tools are known once its MCP servers are up (when it has any).
void connect_tools(executor_ptr self, TaskSpec spec) {
  auto tools = tool_context(spec);
  self->state.can_ask = tools.can_ask;
  const auto& servers = spec.config.mcp_servers;
  bool any = std::any_of(servers.begin(), servers.end(), [](const auto& s) { return s.second.enabled; });
  if (!any || !self->state.mcp || spec.compact_only) return begin(self, std::move(spec), std::move(tools));
  // The first request waits for the servers' start-up (each bounded by its own timeout); the
  // conversation's first task says which are starting.
  if (spec.first_task) {
    for (const auto& [name, server] : servers)
      if (server.enabled) {
        McpStartupStatus starting;
        starting.state = "starting";
        self->state.outbox.push_back(Event{spec.sub_id, McpStartupUpdateEvent{name, std::move(starting)}});
      }
    flush(self);
  }
  // Both handlers hold the one spec (its history is the whole conversation); one of them runs.
  auto held = std::make_shared<std::pair<TaskSpec, ToolContext>>(std::move(spec), std::move(tools));
  self->request(self->state.mcp, caf::infinite, McpConnect{held->first.config.mcp_servers})
      .then([self, held](McpServers& ready) {
              held->second.mcp = std::make_shared<const McpTools>(ready, held->first.config.mcp_servers);
              begin(self, std::move(held->first), std::move(held->second));
            },
            [self, held](caf::error&) { begin(self, std::move(held->first), std::move(held->second)); });
}

turn_executor_actor::behavior_type turn_executor_impl(executor_ptr self, conversation_actor conversation,
                                                     approval_broker_actor broker, mcp_hub_actor mcp,
                                                     model_registry_actor models) {
  self->state.conversation = std::move(conversation);
  self->state.broker = std::move(broker);
  self->state.mcp = std::move(mcp);
  self->state.models = std::move(models);
  auto run = [self](auto&& input) {
    if (!self->state.loop) return;
    StepBuffer buffer;
    auto& steps = buffer.items;
    input(*self->state.loop, steps);
    carry_out(self, steps);
  };
  return {
      [=](start_atom, TaskSpec& spec) {
        self->state.sub_id = spec.sub_id;
        self->state.files = spec.files;
        if (!self->state.models || !spec.model.meta.id.empty()) return connect_tools(self, std::move(spec));
        // What the provider says of the model, from the registry's cache (it never waits on the
        // network); without an answer the task knows the built-in table's facts.
        ModelLookup q{spec.config.provider, spec.config.model};
        auto held = std::make_shared<TaskSpec>(std::move(spec));  // not a copy per handler
        self->request(self->state.models, caf::infinite, std::move(q))
            .then([self, held](models::ModelSpec& model) {
                    held->model = std::move(model);
                    connect_tools(self, std::move(*held));
                  },
                  [self, held](caf::error&) { connect_tools(self, std::move(*held)); });
      },
      [=](interrupt_atom) {
        self->state.interrupted = true;
        run([](TaskLoop& loop, TaskLoop::Steps& out) { loop.interrupt(out); });
      },
      [=](pause_atom, bool paused) {
        auto& st = self->state;
        st.paused = paused;
        if (st.streamer) send_pause(self, *st.streamer, paused);
      },
      [=](McpElicitation& e) -> caf::result<McpElicitationReply> {
        auto& st = self->state;
        if (!st.can_ask || !st.mcp_call || st.mcp_call->second != e.key)
          return McpElicitationReply{mcp::elicit_result(ReviewDecision::denied)};
        // Asked like an approval (the broker's timeout and turn-end rules apply), answered by the
        // resolve_elicitation op.
        auto id = fmt::format("{}/elicitation/{}", e.key, ++st.mcp_calls);
        ApprovalRequest req;
        req.call_id = id;
        req.sub_id = st.sub_id;
        req.event = ElicitationRequestEvent{e.server, id, e.message, e.requested_schema};
        req.key.command = {"elicitation", id};  // never approved for the session
        flush(self);
        auto promise = self->make_response_promise<McpElicitationReply>();
        self->request(st.broker, caf::infinite, std::move(req))
            .then(
                [=](ApprovalReply& reply) mutable {
                  promise.deliver(McpElicitationReply{mcp::elicit_result(reply.decision, reply.content)});
                },
                [=](caf::error&) mutable {
                  promise.deliver(McpElicitationReply{mcp::elicit_result(ReviewDecision::denied)});
                });
        return promise;
      },
      [=](McpProgress& p) {
        if (!self->state.mcp_call || self->state.mcp_call->second != p.key) return;
        run([&](TaskLoop& loop, TaskLoop::Steps& out) { loop.on_mcp_progress(std::move(p.message), out); });
      },
      [=](InjectInput& in) {
        if (self->state.loop)
          self->state.loop->inject(std::move(in.items));
        else  // still waiting for MCP servers: the loop takes it when it starts
          self->state.early_input.push_back(std::move(in.items));
      },
      [=](ModelEvents& batch) {
        self->state.claim = std::move(batch.claim);
        run([&](TaskLoop& loop, TaskLoop::Steps& out) {
          loop.on_model_events(batch.seq, batch.attempt, batch.events, out);
        });
        self->state.claim = {};  // no events came of them: handled
      },
      [=](ModelRetrying& r) {
        run([&](TaskLoop& loop, TaskLoop::Steps& out) { loop.on_model_retrying(r.seq, r.attempt, r.message, out); });
      },
      [=](ExecOutput& output) {
        run([&](TaskLoop& loop, TaskLoop::Steps& out) { loop.on_exec_output(std::move(output), out); });
      },
      [=](ModelFailed& f) {
        run([&](TaskLoop& loop, TaskLoop::Steps& out) { loop.on_model_failed(f.seq, f.message, out); });
      },
      [=](WireFallback& f) {
        if (self->state.models) self->send(self->state.models, f);  // every later request, process-wide
        run([&](TaskLoop& loop, TaskLoop::Steps& out) { loop.on_wire_fallback(f.seq, f.reason, out); });
      },
  };
}

}  // namespace

turn_executor_actor spawn_turn_executor(caf::local_actor* parent, conversation_actor conversation,
                                        approval_broker_actor broker, mcp_hub_actor mcp,
                                        model_registry_actor models) {
  return parent->spawn<caf::linked>(turn_executor_impl, std::move(conversation), std::move(broker), std::move(mcp),
                                    std::move(models));
}

}  // namespace llmx
