// The app server's v2 operations on threads beyond start/resume/list (the reference's shapes):
// thread/fork, thread/read, thread/unarchive, thread/rollback, thread/name/set,
// thread/loaded/list and turn/steer. Turns of stored threads are rebuilt from their rollout by
// plain code (protocol/rpc/v2_history); the conversation does the edits (its ops).
#include <algorithm>

#include "actors/session_state.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/text.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/rpc/v2_history.hpp"
#include "protocol/rpc/v2_threads.hpp"

namespace llmx::session_detail {

std::optional<RpcError> bad_thread_id(const std::string& thread_id) {
  if (is_uuid(thread_id)) return std::nullopt;
  return RpcError{rpc::kInvalidRequest, fmt::format("invalid thread id: {}", thread_id)};
}

namespace {

// `done` gets the live conversation's running turn ("" idle, also when it does not answer), or
// nullopt when the thread is not loaded. Asking it also orders what follows behind its first
// lines (a new or forked thread's), which it queues at the store when it starts.
void running_turn(session_ptr self, const std::string& thread_id,
                  std::function<void(std::optional<std::string>)> done) {
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, thread_id)
      .then(
          [=](conversation_actor conv) {
            self->request(conv, std::chrono::seconds(10), status_atom::value)
                .then([=](std::string& running) { done(running); }, [=](caf::error&) { done(std::string()); });
          },
          [=](caf::error&) { done(std::nullopt); });
}

}  // namespace

void with_live_status(session_ptr self, std::vector<v2::Thread> threads,
                      std::function<void(std::vector<v2::Thread>)> done) {
  auto all = std::make_shared<std::vector<v2::Thread>>(std::move(threads));
  auto left = std::make_shared<size_t>(all->size());
  if (all->empty()) return done({});
  for (size_t i = 0; i < all->size(); ++i)
    running_turn(self, (*all)[i].id, [=](std::optional<std::string> running) {
      if (running) v2::mark_running((*all)[i], *running);
      if (--*left == 0) done(std::move(*all));
    });
}

void read_v2_thread(session_ptr self, ThreadRef ref, bool with_turns, std::function<void(v2::Thread)> done,
                    std::function<void(RpcError)> fail) {
  std::string provider;
  try {
    provider = resolve_config(self).provider.id;
  } catch (const std::exception& err) {
    return fail(RpcError{rpc::kInvalidRequest, fmt::format("error deriving config: {}", err.what())});
  }
  // `running`: the live conversation's running turn ("" idle), nullopt when it is not loaded.
  auto read = [=](std::optional<std::string> running) {
    self->request(self->state.store, caf::infinite, ReadThread{ref})
        .then(
            [=](StoredThread& stored) {
              auto thread = v2::thread_of(stored.summary, provider);
              auto history = v2::history_of(stored.text);
              thread.name = history.name;
              if (with_turns) thread.turns = std::move(history.turns);
              if (running) v2::mark_running(thread, *running);
              done(std::move(thread));
            },
            [=](caf::error& err) { fail(rpc_error_of(err, rpc::kInvalidRequest, "failed to read thread")); });
  };
  if (!ref.id) return read(std::nullopt);
  running_turn(self, *ref.id, read);  // the live conversation first (see running_turn)
}

void open_stored_thread(session_ptr self, ResumeThread req, bool announce, Reply<v2::ThreadOpenedResult> reply,
                        std::string what) {
  auto opened = v2::opened_result(req.config);
  auto home = req.config.llmx_home;
  self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            attach_thread(self, sc.session_id, conv);
            read_v2_thread(
                self, ThreadRef{home, sc.session_id, sc.rollout_path}, true,
                [=](v2::Thread t) mutable {
                  opened.thread = std::move(t);
                  reply(opened);  // the reply first, then what it started (P10)
                  if (announce) notify(self, "thread/started", json::to_json(v2::ThreadResult{opened.thread}));
                },
                [=](RpcError e) { reply(e); });
          },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, what)); });
}

namespace {

void thread_read(session_ptr self, v2::ThreadReadParams p, Reply<v2::ThreadResult> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  read_v2_thread(
      self, ThreadRef{llmx_home(), p.threadId, {}}, p.includeTurns, [=](v2::Thread t) { reply(v2::ThreadResult{t}); },
      [=](RpcError e) { reply(e); });
}

void thread_fork(session_ptr self, v2::ThreadForkParams p, Reply<v2::ThreadOpenedResult> reply) {
  bool by_path = p.path && !p.path->empty();
  if (!by_path)
    if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto cfg = config_or_error(self, reply, [&] { return v2::start_overrides(p); });
  if (!cfg) return;
  cfg->session_source = "vscode";
  ResumeThread req{*cfg, ThreadRef{cfg->llmx_home, {}, {}}, {}, true};
  if (by_path)
    req.ref.path = *p.path;
  else
    req.ref.id = p.threadId;
  open_stored_thread(self, std::move(req), true, reply, "error forking thread");
}

void thread_unarchive(session_ptr self, v2::ThreadIdParams p, Reply<v2::ThreadResult> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto id = p.threadId;
  self->request(self->state.store, caf::infinite, unarchive_atom::value, ThreadRef{llmx_home(), id, {}})
      .then(
          [=](std::string& path) {
            read_v2_thread(
                self, ThreadRef{llmx_home(), id, path}, false,
                [=](v2::Thread t) {
                  reply(v2::ThreadResult{std::move(t)});
                  notify(self, "thread/unarchived", json::to_json(v2::ThreadIdNotification{id}));
                },
                [=](RpcError e) { reply(e); });
          },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to unarchive thread")); });
}

void thread_rollback(session_ptr self, v2::ThreadRollbackParams p, Reply<v2::ThreadResult> reply) {
  if (p.numTurns < 1) return reply(RpcError{rpc::kInvalidRequest, "numTurns must be >= 1"});
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto n = static_cast<uint32_t>(std::min<int64_t>(p.numTurns, UINT32_MAX));
  auto id = p.threadId;
  with_conversation(self, reply, id, [=](conversation_actor conv) {
    self->request(conv, caf::infinite, submit_atom::value, Submission{"", ThreadRollbackOp{n}})
        .then(
            [=](std::string&) {
              read_v2_thread(
                  self, ThreadRef{llmx_home(), id, {}}, true, [=](v2::Thread t) { reply(v2::ThreadResult{t}); },
                  [=](RpcError e) { reply(e); });
            },
            [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to roll back")); });
  });
}

void thread_name_set(session_ptr self, v2::ThreadSetNameParams p, Reply<Empty> reply) {
  auto name = text::trim(p.name);
  if (name.empty()) return reply(RpcError{rpc::kInvalidRequest, "thread name must not be empty"});
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  auto id = p.threadId;
  with_conversation(self, reply, id, [=](conversation_actor conv) {
    self->request(conv, caf::infinite, submit_atom::value, Submission{"", SetThreadNameOp{name}})
        .then(
            [=](std::string&) {
              reply(Empty{});
              // Threads this session follows hear it from their events; the caller hears it anyway.
              if (!self->state.v2_threads.count(id))
                notify(self, "thread/name/updated", json::to_json(v2::ThreadNameUpdatedNotification{id, name}));
            },
            [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to set thread name")); });
  });
}

void thread_loaded_list(session_ptr self, v2::ThreadLoadedListParams p, Reply<v2::ThreadLoadedListResult> reply) {
  if (p.cursor && !is_uuid(*p.cursor))
    return reply(RpcError{rpc::kInvalidRequest, fmt::format("invalid cursor: {}", *p.cursor)});
  self->request(self->state.manager, caf::infinite, list_atom::value)
      .then(
          [=](LoadedThreads& loaded) {
            reply(v2::loaded_page(std::move(loaded.ids), p.cursor, p.limit));
          },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to list loaded threads")); });
}

void turn_steer(session_ptr self, v2::TurnSteerParams p, Reply<v2::TurnSteerResult> reply) {
  if (auto bad = bad_thread_id(p.threadId)) return reply(*bad);
  if (p.expectedTurnId.empty()) return reply(RpcError{rpc::kInvalidRequest, "expectedTurnId must not be empty"});
  std::vector<UserInput> input;
  for (const auto& i : p.input) input.push_back(i.item);
  with_conversation(self, reply, p.threadId, [=](conversation_actor conv) {
    subscribe(self, conv);
    self->request(conv, caf::infinite, submit_atom::value, Submission{"", SteerOp{input, p.expectedTurnId}})
        .then([=](std::string& turn_id) { reply(v2::TurnSteerResult{turn_id}); },
              [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to steer turn")); });
  });
}

}  // namespace

void bind_thread_ops_methods(Methods& t) {
  t.bind<v2::ThreadForkParams, v2::ThreadOpenedResult>("thread/fork", thread_fork);
  t.bind<v2::ThreadReadParams, v2::ThreadResult>("thread/read", thread_read);
  t.bind<v2::ThreadIdParams, v2::ThreadResult>("thread/unarchive", thread_unarchive);
  t.bind<v2::ThreadRollbackParams, v2::ThreadResult>("thread/rollback", thread_rollback);
  t.bind<v2::ThreadSetNameParams, Empty>("thread/name/set", thread_name_set);
  t.bind<v2::ThreadLoadedListParams, v2::ThreadLoadedListResult>("thread/loaded/list", thread_loaded_list);
  t.bind<v2::TurnSteerParams, v2::TurnSteerResult>("turn/steer", turn_steer);
}

}  // namespace llmx::session_detail
