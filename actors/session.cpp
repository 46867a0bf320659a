// The session actor: one per connected client, for both servers (the MCP server and the app
// server). It reads lines, dispatches requests through its server's method table, answers the
// client's replies to our requests, and fans conversation events out to tool calls, listeners
// and v2 threads.
#include "actors/session.hpp"

#include "actors/session_state.hpp"

#include <fmt/format.h>

#include "protocol/base/log.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/text.hpp"
#include "protocol/rpc/mcp.hpp"

namespace llmx {

using namespace session_detail;

namespace {

// Whether anything waits on the conversation that conversation_ended (below) must answer.
bool owes_answer(const SessionState& st, const std::string& conversation_id) {
  return st.tool_calls.running(conversation_id) || st.interrupt_waiters.count(conversation_id) ||
         st.acp_sessions.count(conversation_id);
}

void finish(session_ptr self) {
  auto& st = self->state;
  if (st.finished) return;
  st.finished = true;
  for (const auto& [_, exec] : std::exchange(st.command_execs, {}))  // no command outlives its client
    self->send_exit(exec, caf::exit_reason::user_shutdown);
  // Conversations first (turns aborted, commands killed, rollouts synced), then the writer, so
  // their last events still reach the client and the session ends only when all is on disk.
  auto close_writer = [=] {
    self->request(self->state.writer, std::chrono::seconds(10), shutdown_atom::value)
        .then([=](bool) { self->quit(); }, [=](caf::error&) { self->quit(); });
  };
  if (!st.options.owns_engine) {
    // A listener's client left; its conversations go on only for their other clients.
    for (const auto& [_, conv] : st.conversations)
      self->send(conv, release_atom::value, caf::actor_cast<event_sink_actor>(self));
    return close_writer();
  }
  // The conversations end with the engine. The session still hears of those it owes an answer;
  // 100,000 idle ones would otherwise send as many down messages to an actor that only forgets
  // them (a third of the exit).
  for (const auto& [id, conv] : st.conversations)
    if (!owes_answer(st, id)) self->demonitor(conv.address());
  self->request(st.manager, std::chrono::seconds(10), shutdown_atom::value)
      .then([=](bool) { close_writer(); }, [=](caf::error&) { close_writer(); });
}

// A call's tools/call result, when this step gives it one.
void add_call_result(session_ptr self, const std::string& conversation_id, const CallStep& step, std::string& lines) {
  if (!step.result) return;
  auto result = mcp::tool_result(conversation_id, *step.result, step.result_is_error);
  add_line(lines, self->state.rpc.result(step.call->request_id, json::to_json(result)));
}

// Handles one event of a tools/call in flight; returns whether it was that call's event (its
// approvals are then asked through elicitation, not the v1 listener requests).
bool on_call_event(session_ptr self, const std::string& conversation_id, const Event& ev, std::string& lines) {
  auto& st = self->state;
  auto step = st.tool_calls.on_event(conversation_id, ev);
  if (!step) return false;
  const auto& call = *step->call;
  if (step->forward) {
    next_line(lines);
    st.call_deltas.append(lines, call.request_id.json, ev, [&](std::string& out, const Event& e) {
      st.rpc.notification(out, "llmx/event", [&](json::Writer& w) { mcp::write_event_params(w, call.request_id, e); });
    });
    if (step->progress)
      add_line(lines, st.rpc.notification("notifications/progress",
                                          mcp::progress_params(*call.progress_token, call.progress.progress(),
                                                               *step->progress)));
  }
  if (step->ask_approval) {
    mcp::ElicitationTag tag{call.request_id, ev.id, {}, mcp::has_tasks(st.protocol_version)};
    if (auto ask = approval_ask(ev, conversation_id, &tag)) {
      // Never elicitation/create to a client that did not declare it (its turns run
      // non-interactive; this covers a conversation another client started interactive).
      if (st.client_caps.elicitation_form)
        ask_approval(self, call.conversation, *ask, lines);
      else
        caf::anon_send(call.conversation, submit_atom::value,
                       answer_submission(PendingApproval{call.conversation, ask->call_id, ask->kind, ask->server_name},
                                         std::nullopt));
    }
  }
  // The final reply goes out after the notifications before it (task_complete first, §2.8).
  add_call_result(self, conversation_id, *step, lines);
  return true;
}

void on_events(session_ptr self, ConversationEvents& batch) {
  std::string lines;
  // Sized like the last batch: a batch grown from empty reallocated a dozen times.
  lines.reserve(std::min(self->state.last_lines, SessionState::kLinesReserve));
  for (const auto& ev : batch.events) {
    if (self->state.flavor == SessionState::Flavor::acp) {
      acp_on_event(self, batch.conversation_id, ev, lines);
      continue;
    }
    bool by_call = on_call_event(self, batch.conversation_id, ev, lines);
    forward_to_listeners(self, batch.conversation_id, ev, by_call, lines);
    note_rate_limits(self, ev, lines);
  }
  self->state.last_lines = lines.size();
  if (!lines.empty()) write(self, std::move(lines));
  // After eof, the last call's final lines are queued before the writer is told to stop.
  if (self->state.shutting_down && self->state.tool_calls.empty()) finish(self);
}

// The client's answer to one of our requests.
void on_client_reply(session_ptr self, const rpc::Incoming& in) {
  auto pending = self->state.outgoing.take(in.id);
  if (!pending) {
    log::warn("reply to unknown request id {} ignored", in.id.json);
    return;
  }
  std::optional<json::Element> result;
  if (in.kind == rpc::Incoming::Kind::response && in.result) result = in.result;
  if (pending->on_reply)
    return pending->on_reply(result, in.kind == rpc::Incoming::Kind::error_response
                                          ? fmt::format("{} ({})", in.error_message, in.error_code)
                                          : std::string("the client answered without a result"));
  if (!pending->task_id.empty()) {  // asked for a task: the board delivers it and updates the task
    caf::anon_send(self->state.options.tasks,
                   TaskInput{self->state.options.principal, pending->task_id, pending->call_id,
                             result ? std::optional(json::to_text(*result)) : std::nullopt});
    return;
  }
  if (self->state.flavor == SessionState::Flavor::acp)
    return caf::anon_send(pending->conversation, submit_atom::value, acp_permission_answer(*pending, result));
  caf::anon_send(pending->conversation, submit_atom::value, answer_submission(*pending, result));
}

const Methods& methods_of(session_ptr self) {
  switch (self->state.flavor) {
    case SessionState::Flavor::app: return app_server_methods();
    case SessionState::Flavor::acp: return acp_server_methods();
    case SessionState::Flavor::mcp: break;
  }
  return mcp_server_methods();
}

void on_request(session_ptr self, const rpc::Incoming& in) {
  auto& st = self->state;
  // MCP 2026-07-28 is chosen per request, by the version its `_meta` names (no handshake).
  if (st.flavor == SessionState::Flavor::mcp && mcp::is_stateless_request(in.params)) return serve_stateless(self, in);
  // Refusals before a method runs depend on nothing queued: they go ahead, as pings do.
  constexpr auto ahead = rpc::Lane::ahead;
  if (st.flavor == SessionState::Flavor::app && !st.initialized && in.method != "initialize")
    return write(self, st.rpc.error(in.id, rpc::kInvalidRequest, "Not initialized"), ahead);
  if (st.flavor == SessionState::Flavor::acp && !st.initialized && in.method != "initialize")
    return write(self,
                 st.rpc.error(in.id, rpc::kInvalidRequest,
                              fmt::format("Invalid request: ACP connection must be initialized before '{}'", in.method)),
                 ahead);
  if (!methods_of(self).call(self, in, st.responder))
    write(self, st.rpc.error(in.id, rpc::kMethodNotFound, fmt::format("Method not found: {}", in.method)), ahead);
}

// What waited on a conversation that ended without finishing its turn: a tools/call gets an
// error result, a parked interrupt its answer.
void conversation_ended(session_ptr self, const std::string& conversation_id) {
  auto& st = self->state;
  std::string lines;
  if (auto step = st.tool_calls.drop(conversation_id)) add_call_result(self, conversation_id, *step, lines);
  if (!lines.empty()) write(self, std::move(lines));
  auto [b, e] = st.interrupt_waiters.equal_range(conversation_id);
  for (auto it = b; it != e; ++it) it->second(TurnAbortReason::interrupted);
  st.interrupt_waiters.erase(b, e);
  // An ACP session whose conversation is gone: its prompt fails, the session is no more.
  if (auto it = st.acp_sessions.find(conversation_id); it != st.acp_sessions.end()) {
    if (it->second.prompt) (*it->second.prompt)(RpcError{rpc::kInternalError, "the session ended during the prompt"});
    st.acp_sessions.erase(it);
  }
  if (st.shutting_down && st.tool_calls.empty()) finish(self);
}

session_actor::behavior_type session_impl(session_ptr self, SessionState::Flavor flavor, line_writer_actor writer,
                                          conversation_manager_actor manager, rollout_store_actor store,
                                          SessionOptions options) {
  self->state.flavor = flavor;
  self->state.rpc = rpc::Encoder{flavor != SessionState::Flavor::app};  // the app server omits "jsonrpc"
  self->state.writer = std::move(writer);
  self->state.manager = std::move(manager);
  self->state.store = std::move(store);
  self->state.options = std::move(options);
  if (auto& h = self->state.options.handshake) std::visit([&](auto& hs) { accept_handshake(self, std::move(hs)); }, *h);
  // The table's answers go out through the writer, encoded for this server's envelope.
  auto responder = std::make_shared<rpc::Responder>();
  responder->result = [self](const rpc::Id& id, std::string result, rpc::Lane lane) {
    write(self, self->state.rpc.result(id, result), lane);
  };
  responder->error = [self](const rpc::Id& id, const RpcError& err, rpc::Lane lane) {
    write(self, self->state.rpc.error(id, err.code, err.message, err.data), lane);
  };
  self->state.responder = std::move(responder);
  // The writer ends when the client can no longer read us: that is the end of this session too.
  // A conversation this session knows ended (shut down, archived elsewhere, failed): requests to
  // it get a clear error from now on instead of going to a dead actor.
  self->monitor(self->state.writer);
  // The writer tells us when the client falls behind, so we pause what feeds it.
  self->send(self->state.writer, pressure_atom::value, caf::actor_cast<pressure_sink_actor>(self));
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.source == self->state.writer.address()) {
      self->send(self, eof_atom::value);
      return;
    }
    self->state.followed.erase(dm.source);
    auto& ids = self->state.conversation_ids;
    if (auto it = ids.find(dm.source); it != ids.end()) {
      auto id = it->second;
      conversation_ended(self, id);
      forget_conversation(self, id, "has ended");
    }
  });
  return {
      [=](line_atom, std::string& line) {
        // A line of JSON whitespace carries no message (RFC 8259): nothing to answer.
        if (text::trim_view(line, " \t\r\n").empty()) return;
        rpc::Incoming in;
        try {
          auto& parser = self->state.parser;
          auto root = parser.parse(line);
          in = rpc::classify(root, parser.repaired_top_level_id());
        } catch (const json::DecodeError& err) {
          return write(self, self->state.rpc.error(rpc::Id{}, rpc::kParseError, err.what()), rpc::Lane::ahead);
        }
        switch (in.kind) {
          case rpc::Incoming::Kind::request: return on_request(self, in);
          case rpc::Incoming::Kind::notification:
            if (!methods_of(self).notify(self, in)) log::debug("notification `{}` ignored", in.method);
            return;
          case rpc::Incoming::Kind::invalid:
            return write(self, self->state.rpc.error(in.id, in.invalid_code, in.invalid_reason), rpc::Lane::ahead);
          case rpc::Incoming::Kind::response:
          case rpc::Incoming::Kind::error_response:
            return on_client_reply(self, in);
        }
      },
      [=](oversize_atom, uint64_t limit) {
        write(self,
              self->state.rpc.error(rpc::Id{}, rpc::kInvalidRequest,
                                    fmt::format("Invalid request: message exceeds the maximum line length of {} bytes", limit)),
              rpc::Lane::ahead);
      },
      [=](eof_atom) {
        auto& st = self->state;
        st.shutting_down = true;
        if (st.tool_calls.empty()) return finish(self);
        for (const auto& call : st.tool_calls.cancel_all())
          caf::anon_send(call.conversation, submit_atom::value, Submission{call.sub_id, InterruptOp{}});
        self->delayed_send(self, std::chrono::seconds(5), shutdown_atom::value);
      },
      [=](shutdown_atom) { finish(self); },
      [=](pressure_atom, bool behind) {
        auto& st = self->state;
        if (st.pressed == behind) return;
        st.pressed = behind;
        for (const auto& [_, conv] : st.followed) send_pause(self, conv, behind);
        log::debug("stdout: the client is {}; the model streams of {} conversation(s) {}",
                   behind ? "behind" : "caught up", st.followed.size(), behind ? "pause" : "read on");
      },
      [=](ConversationEvents& batch) { on_events(self, batch); },
      [=](task_atom, std::string& lines) { write(self, std::move(lines)); },
      [=](FileIo& io) -> caf::result<FileIoDone> {
        auto promise = self->make_response_promise<FileIoDone>();
        if (self->state.flavor == SessionState::Flavor::acp) {
          acp_file_io(self, std::move(io), promise);
        } else {
          FileIoDone none;
          none.errors["*"] = "this client does not edit files";
          promise.deliver(std::move(none));
        }
        return promise;
      },
      [=](TaskAsk& ask) {
        auto& st = self->state;
        if (!st.client_caps.elicitation_form)  // this client cannot answer: declined at once
          return caf::anon_send(st.options.tasks, TaskInput{st.options.principal, ask.task_id, ask.key, std::nullopt});
        auto id = st.outgoing.add(PendingApproval{{}, ask.key, AskKind::exec, {}, ask.task_id});
        write(self, st.rpc.request(id, ask.method, ask.params));
      },
  };
}

}  // namespace

namespace session_detail {

Config resolve_config(session_ptr self, const ConfigOverrides& request_overrides) {
  return load_config(self->state.options.base_overrides.merged(request_overrides));
}

Config resolve_config(session_ptr self) { return load_config(self->state.options.base_overrides); }

RpcError rpc_error_of(const caf::error& err, int request_code, std::string_view what) {
  if (is_request_error(err)) {
    if (request_code == rpc::kInvalidParams) return {rpc::kInvalidParams, fmt::format("Invalid params: {}", error_text(err))};
    return {request_code, error_text(err)};
  }
  return {rpc::kInternalError, fmt::format("{}: {}", what, error_text(err))};
}

void remember(session_ptr self, const std::string& conversation_id, const conversation_actor& conv) {
  auto& st = self->state;
  st.gone.erase(conversation_id);  // resumed (or unarchived and resumed) after it went away
  auto [it, fresh] = st.conversations.try_emplace(conversation_id, conv);
  if (!fresh && it->second == conv) return;
  if (!fresh) st.conversation_ids.erase(it->second.address());
  it->second = conv;
  st.conversation_ids[conv.address()] = conversation_id;
  self->monitor(conv);
}

void forget_conversation(session_ptr self, const std::string& conversation_id, std::string why) {
  auto& st = self->state;
  if (auto it = st.conversations.find(conversation_id); it != st.conversations.end()) {
    st.conversation_ids.erase(it->second.address());
    st.conversations.erase(it);
  }
  st.v2_threads.erase(conversation_id);
  st.listeners.forget(conversation_id);
  st.gone[conversation_id] = std::move(why);
}

void ask_approval(session_ptr self, const conversation_actor& conv, const ApprovalAsk& ask, std::string& lines) {
  auto& st = self->state;
  auto id = st.outgoing.add(PendingApproval{conv, ask.call_id, ask.kind, ask.server_name});
  add_line(lines, st.rpc.request(id, ask.method, ask.params));
}

void next_line(std::string& lines) {
  if (!lines.empty()) lines.push_back('\n');
}

void add_line(std::string& lines, std::string_view line) {
  next_line(lines);
  lines.append(line);
}

void add_notes(const rpc::Encoder& rpc, std::string& lines, const rpc::Notes& notes) {
  for (size_t i = 0; i < notes.size(); ++i) {
    const auto note = notes[i];
    next_line(lines);
    rpc.notification(lines, note.method, [&](json::Writer& w) { w.raw(note.params); });
  }
}

// Replies that no earlier notification explains: a client waiting for them must not wait behind
// the notifications queued for it (issue 18: a ping under 200 streaming turns to a slow client).
// Everything else keeps its order, such as a tools/call result after the events of its call.
void answer_ahead(Methods& t) {
  for (std::string_view m : {"initialize", "ping", "tools/list", "model/list", "thread/list", "thread/loaded/list", "thread/read",
                             "listConversations", "getConversationSummary", "config/read", "account/read",
                             "account/rateLimits/read", "getAuthStatus", "getUserAgent", "userInfo",
                             "getUserSavedConfig", "fuzzyFileSearch", "gitDiffToRemote", "session/list"})
    t.ahead(m);
}

const Methods& mcp_server_methods() {
  static const Methods table = [] {
    Methods t;
    bind_mcp_methods(t);
    bind_account_methods(t);
    bind_workspace_methods(t);
    bind_conversation_methods(t);
    bind_thread_methods(t, ModelListShape::items);
    answer_ahead(t);
    return t;
  }();
  return table;
}

const Methods& acp_server_methods() {
  static const Methods table = [] {
    Methods t;
    bind_acp_methods(t);
    answer_ahead(t);
    return t;
  }();
  return table;
}

const Methods& app_server_methods() {
  static const Methods table = [] {
    Methods t;
    bind_app_methods(t);
    bind_account_methods(t);
    bind_workspace_methods(t);
    bind_conversation_methods(t);
    bind_thread_methods(t, ModelListShape::data);
    answer_ahead(t);
    return t;
  }();
  return table;
}

}  // namespace session_detail

session_actor spawn_mcp_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, SessionOptions options) {
  return sys.spawn(session_impl, SessionState::Flavor::mcp, std::move(writer), std::move(manager), std::move(store),
                   std::move(options));
}

session_actor spawn_app_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, SessionOptions options) {
  return sys.spawn(session_impl, SessionState::Flavor::app, std::move(writer), std::move(manager), std::move(store),
                   std::move(options));
}

session_actor spawn_acp_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, SessionOptions options) {
  return sys.spawn(session_impl, SessionState::Flavor::acp, std::move(writer), std::move(manager), std::move(store),
                   std::move(options));
}

std::vector<std::string> served_methods(Server server, bool exported_only) {
  return (server == Server::app ? app_server_methods() : mcp_server_methods()).methods(exported_only);
}

void export_client_requests(schema::Registry& reg, const std::string& union_name) {
  app_server_methods().export_requests(reg, union_name);
}

}  // namespace llmx
