// The app server's requests (protocol.md §4): the initialize handshake that gates everything,
// the v2 thread and turn methods, then the v1 methods it shares with the MCP server.
#include <chrono>

#include "actors/rollout_store.hpp"
#include "actors/session_state.hpp"
#include "protocol/conversation_api.hpp"
#include "protocol/ids.hpp"
#include "protocol/v2_api.hpp"

namespace llmx::session_detail {

namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool check_thread_id(session_ptr self, const rpc::Id& id, const std::string& thread_id) {
  if (is_uuid(thread_id)) return true;
  reply_error(self, id, rpc::kInvalidRequest, fmt::format("invalid thread id: {}", thread_id));
  return false;
}

// A thread started or resumed through v2 streams to this session: the v1 event stream and the
// P9 notifications (protocol.md §4.5: a listener is attached automatically).
void attach(session_ptr self, const std::string& conv_id, const conversation_actor& conv) {
  auto& st = self->state;
  st.conversations[conv_id] = conv;
  subscribe(self, conv);
  st.listeners[new_uuid_v4()] = Listener{conv_id, false};
  st.v2_threads.try_emplace(conv_id);
}

void initialize(session_ptr self, const rpc::Incoming& in) {
  auto& st = self->state;
  if (st.initialized) return reply_error(self, in.id, rpc::kInvalidRequest, "Already initialized");
  auto p = decode<v2::InitializeParams>(self, in);
  if (!p) return;
  st.initialized = true;
  st.client_suffix = p->clientInfo.name + "; " + p->clientInfo.version;
  reply(self, in.id, json::to_json(v2::InitializeResult{user_agent(st.client_suffix)}));
}

void thread_start(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::ThreadStartParams>(self, in);
  if (!p) return;
  auto o = self->state.options.base_overrides;
  if (p->model) o.model = *p->model;
  if (p->modelProvider) o.model_provider = *p->modelProvider;
  if (p->cwd) o.cwd = *p->cwd;
  if (p->approvalPolicy) o.approval_policy = v2::to_core(*p->approvalPolicy);
  if (p->sandbox) o.sandbox_mode = v2::to_core(*p->sandbox);
  if (p->baseInstructions) o.base_instructions = *p->baseInstructions;
  if (p->developerInstructions) o.developer_instructions = *p->developerInstructions;
  Config cfg;
  try {
    if (p->config) {
      auto more = api::dotted_overrides(*p->config);
      o.json_overrides.insert(o.json_overrides.end(), more.begin(), more.end());
    }
    cfg = load_config(o);
  } catch (const std::exception& err) {
    return reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("error deriving config: {}", err.what()));
  }
  cfg.session_source = "vscode";
  auto provider = cfg.provider.id;
  auto id = in.id;
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            attach(self, sc.session_id, conv);
            v2::ThreadResult r{v2::Thread{sc.session_id, "", provider, unix_now()}};
            auto thread = json::to_json(r);
            reply(self, id, thread);  // the reply first, then what it started (P10)
            write(self, self->state.rpc.notification("thread/started", thread));
          },
          [=](caf::error& err) {
            reply_error(self, id, rpc::kInternalError, fmt::format("error creating thread: {}", error_text(err)));
          });
}

void thread_resume(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::ThreadIdParams>(self, in);
  if (!p || !check_thread_id(self, in.id, p->threadId)) return;
  Config cfg;
  try {
    cfg = load_config(self->state.options.base_overrides);
  } catch (const std::exception& err) {
    return reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("error deriving config: {}", err.what()));
  }
  cfg.session_source = "vscode";
  ResumeThread req{cfg, ThreadRef{cfg.llmx_home, p->threadId, {}}, {}};
  auto provider = cfg.provider.id;
  auto id = in.id;
  self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            attach(self, sc.session_id, conv);
            v2::Thread t{sc.session_id, v2::preview_from_initial_messages(sc.initial_messages), provider, 0};
            // The thread's creation time is in its id (UUID v7 milliseconds).
            if (auto ms = uuid_v7_millis(sc.session_id)) t.createdAt = *ms / 1000;
            reply(self, id, json::to_json(v2::ThreadResult{t}));
          },
          [=](caf::error& err) {
            if (is_request_error(err)) return reply_error(self, id, rpc::kInvalidRequest, error_text(err));
            reply_error(self, id, rpc::kInternalError, fmt::format("error resuming thread: {}", error_text(err)));
          });
}

void thread_list(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::ThreadListParams>(self, in);
  if (!p) return;
  Config cfg;
  try {
    cfg = load_config(self->state.options.base_overrides);
  } catch (const std::exception& err) {
    return reply_error(self, in.id, rpc::kInternalError, fmt::format("failed to list conversations: {}", err.what()));
  }
  ListThreads req;
  req.home = cfg.llmx_home;
  req.query.page_size = static_cast<size_t>(std::max<int64_t>(1, p->limit.value_or(25)));
  req.query.cursor = p->cursor;
  if (p->modelProviders) req.query.model_providers = *p->modelProviders;
  req.query.default_provider = cfg.provider.id;
  auto id = in.id;
  auto provider = cfg.provider.id;
  self->request(self->state.store, caf::infinite, std::move(req))
      .then(
          [=](ThreadPage& tp) {
            v2::ThreadListResult r;
            for (const auto& t : tp.page.items)
              r.data.push_back(v2::Thread{t.id, t.preview, t.model_provider.value_or(provider), t.created_unix});
            r.nextCursor = tp.page.next_cursor;
            reply(self, id, json::to_json(r));
          },
          [=](caf::error& err) {
            if (is_request_error(err))
              return reply_error(self, id, rpc::kInvalidParams, fmt::format("Invalid params: {}", error_text(err)));
            reply_error(self, id, rpc::kInternalError, fmt::format("failed to list conversations: {}", error_text(err)));
          });
}

void thread_archive(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::ThreadIdParams>(self, in);
  if (!p || !check_thread_id(self, in.id, p->threadId)) return;
  auto id = in.id;
  auto thread_id = p->threadId;
  self->request(self->state.manager, caf::infinite, archive_atom::value, ThreadRef{llmx_home(), thread_id, {}})
      .then(
          [=](std::string&) {
            self->state.conversations.erase(thread_id);
            self->state.v2_threads.erase(thread_id);
            reply(self, id, "{}");
          },
          [=](caf::error& err) {
            if (is_request_error(err)) return reply_error(self, id, rpc::kInvalidRequest, error_text(err));
            reply_error(self, id, rpc::kInternalError, fmt::format("failed to archive conversation: {}", error_text(err)));
          });
}

// llmx compacts here (the reference refuses thread/compact with an error): the thread
// compacts as its own task; the events and turn/completed follow on the stream.
void thread_compact(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::ThreadIdParams>(self, in);
  if (!p || !check_thread_id(self, in.id, p->threadId)) return;
  auto id = in.id;
  with_conversation(self, id, p->threadId, [=](conversation_actor conv) {
    caf::anon_send(conv, submit_atom::value, Submission{"", CompactOp{}});
    reply(self, id, "{}");
  });
}

void turn_start(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::TurnStartParams>(self, in);
  if (!p || !check_thread_id(self, in.id, p->threadId)) return;
  std::vector<UserInput> input;
  for (const auto& i : p->input) input.push_back(i.item);
  std::optional<OverrideTurnContextOp> overrides;
  if (p->cwd || p->approvalPolicy || p->sandboxPolicy || p->model || p->effort || p->summary) {
    OverrideTurnContextOp o;
    if (p->cwd) o.cwd = *p->cwd;
    if (p->approvalPolicy) o.approval_policy = v2::to_core(*p->approvalPolicy);
    if (p->sandboxPolicy) o.sandbox_policy = *p->sandboxPolicy;
    if (p->model) o.model = *p->model;
    if (p->effort) o.effort = *p->effort;
    if (p->summary) o.summary = *p->summary;
    overrides = std::move(o);
  }
  auto id = in.id;
  with_conversation(self, id, p->threadId, [=](conversation_actor conv) {
    subscribe(self, conv);
    if (overrides) caf::anon_send(conv, submit_atom::value, Submission{"", *overrides});
    self->request(conv, caf::infinite, submit_atom::value, Submission{"", UserInputOp{input}})
        .then(
            [=](std::string& turn_id) {
              v2::Turn turn;
              turn.id = turn_id;
              turn.items.push_back(v2::user_message_item(turn_id, input));
              auto result = json::to_json(v2::TurnResult{turn});
              reply(self, id, result);  // the reply first, then what it started (P10)
              write(self, self->state.rpc.notification("turn/started", result));
            },
            [=](caf::error& err) {
              reply_error(self, id, rpc::kInternalError, fmt::format("failed to start turn: {}", error_text(err)));
            });
  });
}

void turn_interrupt(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<v2::TurnInterruptParams>(self, in);
  if (!p || !check_thread_id(self, in.id, p->threadId)) return;
  auto id = in.id;
  auto thread_id = p->threadId;
  with_conversation(self, id, thread_id, [=](conversation_actor conv) {
    subscribe(self, conv);
    self->request(conv, caf::infinite, interrupt_atom::value)
        .then(
            [=](bool was_running) {
              if (was_running)
                self->state.interrupt_waiters.emplace(thread_id, SessionState::InterruptWaiter{id, true});
              else
                reply_error(self, id, rpc::kInvalidRequest, fmt::format("thread {} has no running turn", thread_id));
            },
            [=](caf::error& err) { reply_error(self, id, rpc::kInternalError, error_text(err)); });
  });
}

}  // namespace

void handle_app_request(session_ptr self, const rpc::Incoming& in) {
  const auto& m = in.method;
  if (m == "initialize") return initialize(self, in);
  if (!self->state.initialized) return reply_error(self, in.id, rpc::kInvalidRequest, "Not initialized");
  if (m == "thread/start") return thread_start(self, in);
  if (m == "thread/resume") return thread_resume(self, in);
  if (m == "thread/list") return thread_list(self, in);
  if (m == "thread/archive") return thread_archive(self, in);
  if (m == "thread/compact") return thread_compact(self, in);
  if (m == "turn/start") return turn_start(self, in);
  if (m == "turn/interrupt") return turn_interrupt(self, in);
  if (handle_account_method(self, in)) return;
  if (handle_conversation_method(self, in)) return;
  if (handle_thread_method(self, in)) return;
  reply_error(self, in.id, rpc::kMethodNotFound, fmt::format("Method not found: {}", m));
}

}  // namespace llmx::session_detail
