// The app server's own methods (protocol.md §4): the initialize handshake that gates everything
// (session.cpp), and the v2 thread and turn methods.
#include <chrono>

#include "actors/rollout_store.hpp"
#include "actors/session_state.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/rpc/v2_api.hpp"

namespace llmx::session_detail {

namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A malformed thread id: answered here, before any actor is asked.
std::optional<RpcError> bad_thread_id(const std::string& thread_id) {
  if (is_uuid(thread_id)) return std::nullopt;
  return RpcError{rpc::kInvalidRequest, fmt::format("invalid thread id: {}", thread_id)};
}

// A thread started or resumed through v2 streams to this session: the v1 event stream and the
// P9 notifications (protocol.md §4.5: a listener is attached automatically).
void attach(session_ptr self, const std::string& conv_id, const conversation_actor& conv) {
  remember(self, conv_id, conv);
  subscribe(self, conv);
  self->state.listeners.add(conv_id, false);
  self->state.v2_threads.try_emplace(conv_id);
}

void initialize(session_ptr self, v2::InitializeParams p, Reply<v2::InitializeResult> reply) {
  auto& st = self->state;
  if (st.initialized) return reply(RpcError{rpc::kInvalidRequest, "Already initialized"});
  st.initialized = true;
  st.client_suffix = p.clientInfo.name + "; " + p.clientInfo.version;
  reply(v2::InitializeResult{user_agent(st.client_suffix)});
}

void thread_start(session_ptr self, v2::ThreadStartParams p, Reply<v2::ThreadResult> reply) {
  ConfigOverrides o;
  if (p.model) o.model = *p.model;
  if (p.modelProvider) o.model_provider = *p.modelProvider;
  if (p.cwd) o.cwd = *p.cwd;
  if (p.approvalPolicy) o.approval_policy = v2::to_core(*p.approvalPolicy);
  if (p.sandbox) o.sandbox_mode = v2::to_core(*p.sandbox);
  if (p.baseInstructions) o.base_instructions = *p.baseInstructions;
  if (p.developerInstructions) o.developer_instructions = *p.developerInstructions;
  auto cfg = config_or_error(self, reply, [&] {
    if (p.config) o.json_overrides = api::dotted_overrides(*p.config);
    return o;
  });
  if (!cfg) return;
  cfg->session_source = "vscode";
  auto provider = cfg->provider.id;
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(*cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            attach(self, sc.session_id, conv);
            v2::ThreadResult r{v2::Thread{sc.session_id, "", provider, unix_now()}};
            reply(r);  // the reply first, then what it started (P10)
            notify(self, "thread/started", json::to_json(r));
          },
          [=](caf::error& err) {
            reply(RpcError{rpc::kInternalError, fmt::format("error creating thread: {}", error_text(err))});
          });
}

void thread_resume(session_ptr self, v2::ThreadIdParams p, Reply<v2::ThreadResult> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  cfg->session_source = "vscode";
  ResumeThread req{*cfg, ThreadRef{cfg->llmx_home, p.threadId, {}}, {}};
  auto provider = cfg->provider.id;
  self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            attach(self, sc.session_id, conv);
            v2::Thread t{sc.session_id, v2::preview_from_initial_messages(sc.initial_messages), provider, 0};
            // The thread's creation time is in its id (UUID v7 milliseconds).
            if (auto ms = uuid_v7_millis(sc.session_id)) t.createdAt = *ms / 1000;
            reply(v2::ThreadResult{t});
          },
          [=](caf::error& err) {
            reply(rpc_error_of(err, rpc::kInvalidRequest, "error resuming thread"));
          });
}

void thread_list(session_ptr self, v2::ThreadListParams p, Reply<v2::ThreadListResult> reply) {
  Config cfg;
  try {
    cfg = resolve_config(self);
  } catch (const std::exception& err) {
    return reply(RpcError{rpc::kInternalError, fmt::format("failed to list conversations: {}", err.what())});
  }
  ListThreads req;
  req.home = cfg.llmx_home;
  req.query.page_size = static_cast<size_t>(std::max<int64_t>(1, p.limit.value_or(25)));
  req.query.cursor = p.cursor;
  if (p.modelProviders) req.query.model_providers = *p.modelProviders;
  req.query.default_provider = cfg.provider.id;
  auto provider = cfg.provider.id;
  self->request(self->state.store, caf::infinite, std::move(req))
      .then(
          [=](ThreadPage& tp) {
            v2::ThreadListResult r;
            for (const auto& t : tp.page.items)
              r.data.push_back(v2::Thread{t.id, t.preview, t.model_provider.value_or(provider), t.created_unix});
            r.nextCursor = tp.page.next_cursor;
            reply(r);
          },
          [=](caf::error& err) {
            reply(rpc_error_of(err, rpc::kInvalidParams, "failed to list conversations"));
          });
}

void thread_archive(session_ptr self, v2::ThreadIdParams p, Reply<Empty> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto thread_id = p.threadId;
  self->request(self->state.manager, caf::infinite, archive_atom::value, ThreadRef{llmx_home(), thread_id, {}})
      .then(
          [=](std::string&) {
            forget_conversation(self, thread_id, "was archived");
            reply(Empty{});
          },
          [=](caf::error& err) {
            reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to archive conversation"));
          });
}

// llmx compacts here (the reference refuses thread/compact with an error): the thread
// compacts as its own task; the events and turn/completed follow on the stream.
void thread_compact(session_ptr self, v2::ThreadIdParams p, Reply<Empty> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  with_conversation(self, reply, p.threadId, [=](conversation_actor conv) {
    caf::anon_send(conv, submit_atom::value, Submission{"", CompactOp{}});
    reply(Empty{});
  });
}

void turn_start(session_ptr self, v2::TurnStartParams p, Reply<v2::TurnResult> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  std::vector<UserInput> input;
  for (const auto& i : p.input) input.push_back(i.item);
  std::optional<OverrideTurnContextOp> overrides;
  if (p.cwd || p.approvalPolicy || p.sandboxPolicy || p.model || p.effort || p.summary) {
    OverrideTurnContextOp o;
    if (p.cwd) o.cwd = *p.cwd;
    if (p.approvalPolicy) o.approval_policy = v2::to_core(*p.approvalPolicy);
    if (p.sandboxPolicy) o.sandbox_policy = *p.sandboxPolicy;
    if (p.model) o.model = *p.model;
    if (p.effort) o.effort = *p.effort;
    if (p.summary) o.summary = *p.summary;
    overrides = std::move(o);
  }
  with_conversation(self, reply, p.threadId, [=](conversation_actor conv) {
    subscribe(self, conv);
    if (overrides) caf::anon_send(conv, submit_atom::value, Submission{"", *overrides});
    self->request(conv, caf::infinite, submit_atom::value, Submission{"", UserInputOp{input}})
        .then(
            [=](std::string& turn_id) {
              v2::Turn turn;
              turn.id = turn_id;
              turn.items.push_back(v2::user_message_item(turn_id, input));
              v2::TurnResult result{turn};
              reply(result);  // the reply first, then what it started (P10)
              notify(self, "turn/started", json::to_json(result));
            },
            [=](caf::error& err) {
              reply(RpcError{rpc::kInternalError, fmt::format("failed to start turn: {}", error_text(err))});
            });
  });
}

void turn_interrupt(session_ptr self, v2::TurnInterruptParams p, Reply<Empty> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto thread_id = p.threadId;
  with_conversation(self, reply, thread_id, [=](conversation_actor conv) {
    subscribe(self, conv);
    self->request(conv, caf::infinite, interrupt_atom::value)
        .then(
            [=](bool was_running) {
              if (was_running)
                self->state.interrupt_waiters.emplace(thread_id, [reply](TurnAbortReason) { reply(Empty{}); });
              else
                reply(RpcError{rpc::kInvalidRequest, fmt::format("thread {} has no running turn", thread_id)});
            },
            [=](caf::error& err) { reply(RpcError{rpc::kInternalError, error_text(err)}); });
  });
}

}  // namespace

void bind_app_methods(Methods& t) {
  t.bind<v2::InitializeParams, v2::InitializeResult>("initialize", initialize);
  t.bind<v2::ThreadStartParams, v2::ThreadResult>("thread/start", thread_start);
  t.bind<v2::ThreadIdParams, v2::ThreadResult>("thread/resume", thread_resume);
  t.bind<v2::ThreadListParams, v2::ThreadListResult>("thread/list", thread_list);
  t.bind<v2::ThreadIdParams, Empty>("thread/archive", thread_archive);
  t.bind<v2::ThreadIdParams, Empty>("thread/compact", thread_compact);
  t.bind<v2::TurnStartParams, v2::TurnResult>("turn/start", turn_start);
  t.bind<v2::TurnInterruptParams, Empty>("turn/interrupt", turn_interrupt);
}

}  // namespace llmx::session_detail
