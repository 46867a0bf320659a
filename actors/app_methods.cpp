// The app server's own methods (protocol.md §4): the initialize handshake that gates everything
// (session.cpp), and the v2 thread and turn methods.
#include <chrono>
#include <filesystem>

#include "actors/rollout_store.hpp"
#include "actors/session_state.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/rpc/v2_api.hpp"
#include "protocol/rpc/v2_config.hpp"
#include "protocol/rpc/v2_history.hpp"
#include "protocol/rpc/v2_threads.hpp"

namespace llmx::session_detail {

void accept_handshake(session_ptr self, rpc::AppHandshake h) {
  self->state.initialized = true;
  self->state.client_suffix = std::move(h.client_suffix);
}

namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void initialize(session_ptr self, v2::InitializeParams p, Reply<v2::InitializeResult> reply) {
  if (self->state.initialized) return reply(RpcError{rpc::kInvalidRequest, "Already initialized"});
  auto h = rpc::app_handshake(p);
  reply(rpc::app_initialize_result(h));
  accept_handshake(self, std::move(h));
}

void thread_start(session_ptr self, v2::ThreadStartParams p, Reply<v2::ThreadOpenedResult> reply) {
  auto cfg = config_or_error(self, reply, [&] { return v2::start_overrides(p); });
  if (!cfg) return;
  cfg->session_source = "vscode";
  auto opened = v2::opened_result(*cfg);
  auto started = *cfg;
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(*cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) mutable {
            attach_thread(self, sc.session_id, conv);
            opened.thread = v2::new_thread(sc.session_id, started, sc.rollout_path, unix_now());
            reply(opened);  // the reply first, then what it started (P10)
            notify(self, "thread/started", json::to_json(v2::ThreadResult{opened.thread}));
          },
          [=](caf::error& err) {
            reply(RpcError{rpc::kInternalError, fmt::format("error creating thread: {}", error_text(err))});
          });
}

void thread_resume(session_ptr self, v2::ThreadIdParams p, Reply<v2::ThreadOpenedResult> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  cfg->session_source = "vscode";
  open_stored_thread(self, ResumeThread{*cfg, ThreadRef{cfg->llmx_home, p.threadId, {}}, {}}, false, reply,
                     "error resuming thread");
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
            std::vector<v2::Thread> threads;
            for (const auto& t : tp.page.items) threads.push_back(v2::thread_of(t, provider));
            auto next = tp.page.next_cursor;
            with_live_status(self, std::move(threads), [=](std::vector<v2::Thread> data) {
              reply(v2::ThreadListResult{std::move(data), next});
            });
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
            notify(self, "thread/archived", json::to_json(v2::ThreadIdNotification{thread_id}));
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
  // A turn without input would be announced and never complete: the client would wait forever.
  if (p.input.empty()) return reply(RpcError{rpc::kInvalidParams, "Invalid params: `input` must not be empty"});
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

// config/read: the settings' layers as the reference shows them (llmx has a user layer and the
// server's flags; no system, project or managed layers).
void config_read(session_ptr self, v2::ConfigReadParams p, Reply<v2::ConfigReadResult> reply) {
  if (p.cwd) {
    std::error_code ec;
    if (!std::filesystem::is_directory(*p.cwd, ec))
      return reply(RpcError{rpc::kInternalError, fmt::format("invalid config cwd: {} is not a directory", *p.cwd)});
  }
  try {
    reply(v2::config_read(config_layers_json(self->state.options.base_overrides), p.includeLayers));
  } catch (const std::exception& err) {
    reply(RpcError{rpc::kInternalError, fmt::format("failed to read configuration layers: {}", err.what())});
  }
}

}  // namespace

void attach_thread(session_ptr self, const std::string& thread_id, const conversation_actor& conv) {
  // The v1 event stream and the P9 notifications (protocol.md §4.5: a listener is attached
  // automatically).
  remember(self, thread_id, conv);
  subscribe(self, conv);
  self->state.listeners.add(thread_id, false);
  self->state.v2_threads.try_emplace(thread_id);
}

void bind_app_methods(Methods& t) {
  t.bind<v2::InitializeParams, v2::InitializeResult>("initialize", initialize);
  t.bind<v2::ThreadStartParams, v2::ThreadOpenedResult>("thread/start", thread_start);
  t.bind<v2::ThreadIdParams, v2::ThreadOpenedResult>("thread/resume", thread_resume);
  t.bind<v2::ThreadListParams, v2::ThreadListResult>("thread/list", thread_list);
  t.bind<v2::ThreadIdParams, Empty>("thread/archive", thread_archive);
  t.bind<v2::ThreadIdParams, Empty>("thread/compact", thread_compact);
  t.bind<v2::TurnStartParams, v2::TurnResult>("turn/start", turn_start);
  t.bind<v2::TurnInterruptParams, Empty>("turn/interrupt", turn_interrupt);
  t.bind<v2::ConfigReadParams, v2::ConfigReadResult>("config/read", config_read);
  bind_thread_ops_methods(t);
  bind_command_exec_methods(t);
}

}  // namespace llmx::session_detail
