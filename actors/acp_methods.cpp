// `llmx acp`: the Agent Client Protocol v1 for editors (issue 17). An ACP session is one
// conversation: session/prompt runs a turn and answers its stop reason after streaming it as
// session/update; approvals are session/request_permission; modes are the approval presets.
// The protocol's shapes are plain code in protocol/rpc/acp.*.
#include "actors/session_state.hpp"

#include <algorithm>
#include <filesystem>

#include "protocol/base/log.hpp"

namespace llmx::session_detail {

void accept_handshake(session_ptr self, rpc::AcpHandshake h) {
  self->state.initialized = true;
  self->state.acp_caps = h.client_caps;
}

namespace {

using RawReply = Reply<RawJson>;


// A session's folder and the editor's MCP servers, on top of the operator's settings (whose
// approval policy and sandbox are the session's starting mode); nullopt after answering why not.
template <class R>
std::optional<Config> session_config(session_ptr self, const Reply<R>& reply, const std::string& cwd,
                                     const std::optional<RawJson>& mcp_servers) {
  std::error_code ec;
  if (!std::filesystem::path(cwd).is_absolute() || !std::filesystem::is_directory(cwd, ec)) {
    reply(RpcError{rpc::kInvalidParams, "Invalid params: cwd must be an absolute path to a folder"});
    return std::nullopt;
  }
  ConfigOverrides overrides;
  overrides.cwd = cwd;
  try {
    overrides.json_overrides = acp::mcp_server_overrides(mcp_servers);  // started like configured servers
  } catch (const json::DecodeError& err) {
    reply(RpcError{rpc::kInvalidParams, std::string("Invalid params: ") + err.what()});
    return std::nullopt;
  }
  auto cfg = config_or_error(self, reply, [&] { return overrides; });
  if (cfg) cfg->session_source = "acp";
  return cfg;
}

// The session's entry; its mode is the preset its settings are (or "configured"), its model
// selector offers what the provider serves.
AcpSession& open_session(session_ptr self, const std::string& id, const conversation_actor& conv, const Config& cfg,
                         const models::ModelCatalog& catalog) {
  remember(self, id, conv);
  subscribe(self, conv);
  auto mode = acp::mode_of(enum_name(cfg.approval_policy), enum_name(cfg.sandbox_policy.mode));
  auto& s = self->state.acp_sessions[id];
  s = AcpSession{conv, mode, cfg.approval_policy, cfg.sandbox_policy, std::nullopt, std::nullopt, cfg.model,
                 models::catalog_presets(catalog, cfg.model)};
  return s;
}

void initialize(session_ptr self, acp::InitializeParams p, RawReply reply) {
  accept_handshake(self, rpc::acp_handshake(p));
  reply(RawJson{acp::initialize_result()});
}

// The one method: the key llmx already has (LLMX_API_KEY or the provider's variable).
void authenticate(session_ptr self, acp::AuthenticateParams p, RawReply reply) {
  if (p.methodId != "api-key") return reply(RpcError{rpc::kInvalidParams, "Invalid params: unknown auth method " + p.methodId});
  reply(RawJson{"{}"});
}

void new_session(session_ptr self, acp::NewSessionParams p, RawReply reply) {
  auto cfg = session_config(self, reply, p.cwd, p.mcpServers);
  if (!cfg) return;
  auto settings = *cfg;
  with_catalog(self, settings.provider, [=](const models::ModelCatalog& catalog) {
    self->request(self->state.manager, caf::infinite, new_conv_atom::value, settings)
        .then(
            [=](conversation_actor conv, SessionConfiguredEvent& sc) {
              auto& s = open_session(self, sc.session_id, conv, settings, catalog);
              reply(RawJson{acp::new_session_result(sc.session_id, s.mode, acp::config_options(s.models, s.model))});
            },
            [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInternalError, "cannot start a session")); });
  });
}

// A stored session, its history replayed as session/update before the answer.
void load_session(session_ptr self, acp::LoadSessionParams p, RawReply reply) {
  if (self->state.acp_sessions.count(p.sessionId))
    return reply(RpcError{rpc::kInvalidRequest, "Invalid request: session " + p.sessionId + " is already open"});
  auto cfg = session_config(self, reply, p.cwd, p.mcpServers);
  if (!cfg) return;
  auto settings = *cfg;
  auto id = p.sessionId;
  with_catalog(self, settings.provider, [=](const models::ModelCatalog& catalog) {
  ResumeThread req{settings, ThreadRef{settings.llmx_home, id, {}}, {}};
  self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            auto& st = self->state;
            auto& s = open_session(self, id, conv, settings, catalog);
            std::string lines;
            try {
              if (sc.initial_messages) add_notes(st.rpc, lines, acp::replay_updates(id, *sc.initial_messages));
            } catch (const std::exception& err) {
              log::warn("session/load {}: history not replayed: {}", id, err.what());
            }
            if (!lines.empty()) write(self, std::move(lines));
            reply(RawJson{acp::load_session_result(s.mode, acp::config_options(s.models, s.model))});
          },
          [=](caf::error&) { reply(acp::session_not_found(id)); });
  });
}

// Stored sessions, newest first (optionally of one folder).
void list_sessions(session_ptr self, acp::ListSessionsParams p, RawReply reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  threads::ListQuery q;
  q.page_size = 50;
  q.cursor = p.cursor;
  q.cwd = p.cwd;  // filtered by the store, so a page is full whatever the folder
  self->request(self->state.store, caf::infinite, ListThreads{cfg->llmx_home, q})
      .then(
          [=](ThreadPage& page) { reply(RawJson{acp::list_sessions_result(page.page)}); },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidParams, "cannot list sessions")); });
}

void prompt(session_ptr self, acp::PromptParams p, RawReply reply) {
  auto& st = self->state;
  auto it = st.acp_sessions.find(p.sessionId);
  if (it == st.acp_sessions.end()) return reply(acp::session_not_found(p.sessionId));
  auto& s = it->second;
  if (s.prompt)
    return reply(RpcError{rpc::kInvalidRequest, "Invalid request: a prompt is already running in this session; "
                                                "cancel it or wait for its answer"});
  std::string text;
  try {
    text = acp::prompt_text(p.prompt);
  } catch (const json::DecodeError& err) {
    return reply(RpcError{rpc::kInvalidParams, std::string("Invalid params: ") + err.what()});
  }
  if (text.empty()) return reply(RpcError{rpc::kInvalidParams, "Invalid params: the prompt is empty"});
  s.prompt = reply;
  s.turn.emplace(p.sessionId);
  UserInputOp input{{TextInput{std::move(text)}}, true, true};
  auto id = p.sessionId;
  // An editor that reads and writes files itself gets this turn's patch reads and writes, so what
  // it has unsaved counts and its buffers follow the agent's edits.
  if (self->state.acp_caps.read_text_file && self->state.acp_caps.write_text_file)
    self->send(s.conversation, FileDelegate{caf::actor_cast<caf::strong_actor_ptr>(self), id});
  self->request(s.conversation, caf::infinite, submit_atom::value, Submission{"", std::move(input)})
      .then(
          [=](const std::string& sub) {
            if (!sub.empty()) return;
            auto& sessions = self->state.acp_sessions;
            if (auto it = sessions.find(id); it != sessions.end() && it->second.prompt) {
              it->second.prompt.reset();  // refused: the conversation is busy or ending
              it->second.turn.reset();
              reply(RpcError{rpc::kInvalidRequest, "Invalid request: the session cannot take a prompt now"});
            }
          },
          [=](caf::error& err) {
            auto& sessions = self->state.acp_sessions;
            if (auto it = sessions.find(id); it != sessions.end()) {
              it->second.prompt.reset();
              it->second.turn.reset();
            }
            reply(rpc_error_of(err, rpc::kInternalError, "cannot run the prompt"));
          });
}

// A notification: the running turn stops, and its prompt answers `cancelled`.
void cancel(session_ptr self, acp::SessionIdParams p) {
  auto& st = self->state;
  auto it = st.acp_sessions.find(p.sessionId);
  if (it == st.acp_sessions.end() || !it->second.prompt) return;
  caf::anon_send(it->second.conversation, submit_atom::value, Submission{"", InterruptOp{}});
}

void set_mode(session_ptr self, acp::SetModeParams p, RawReply reply) {
  auto& st = self->state;
  auto it = st.acp_sessions.find(p.sessionId);
  if (it == st.acp_sessions.end()) return reply(acp::session_not_found(p.sessionId));
  auto& s = it->second;
  const auto* mode = acp::find_mode(p.modeId);
  bool configured = p.modeId == acp::kConfiguredMode;
  if (!mode && !configured) return reply(RpcError{rpc::kInvalidParams, "Invalid params: unknown mode " + p.modeId});
  s.mode = p.modeId;
  // The session's own sandbox settings (writable roots, network) stay; the preset sets the rest.
  OverrideTurnContextOp op;
  op.approval_policy = configured ? s.configured_approval : *enum_from_name<AskForApproval>(mode->approval_policy);
  op.sandbox_policy = s.configured_sandbox;
  if (!configured) op.sandbox_policy->mode = *enum_from_name<SandboxMode>(mode->sandbox_mode);
  caf::anon_send(it->second.conversation, submit_atom::value, Submission{"", std::move(op)});
  reply(RawJson{"{}"});
}

// The model selector: the next turns use the chosen model (one the provider serves, or the one
// the session started with).
void set_config_option(session_ptr self, acp::SetConfigOptionParams p, RawReply reply) {
  auto& st = self->state;
  auto it = st.acp_sessions.find(p.sessionId);
  if (it == st.acp_sessions.end()) return reply(acp::session_not_found(p.sessionId));
  if (p.configId != acp::kModelOption)
    return reply(RpcError{rpc::kInvalidParams, "Invalid params: unknown config option " + p.configId});
  auto model = acp::select_value(p.value);
  if (!model) return reply(RpcError{rpc::kInvalidParams, "Invalid params: the model option takes a model id (a string)"});
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  // Checked against what the provider serves now (the list may have changed since session/new).
  auto id = p.sessionId;
  with_catalog(self, cfg->provider, [=](const models::ModelCatalog& catalog) {
    auto it = self->state.acp_sessions.find(id);
    if (it == self->state.acp_sessions.end()) return reply(acp::session_not_found(id));
    auto& s = it->second;
    auto offered = models::catalog_presets(catalog, s.model);
    bool known = std::any_of(offered.begin(), offered.end(), [&](const models::ModelPreset& m) { return m.model == *model; });
    if (!known) return reply(RpcError{rpc::kInvalidParams, "Invalid params: the provider does not serve model " + *model});
    s.models = std::move(offered);
    s.model = *model;
    OverrideTurnContextOp op;
    op.model = *model;
    caf::anon_send(s.conversation, submit_atom::value, Submission{"", std::move(op)});
    reply(RawJson{acp::set_config_option_result(acp::config_options(s.models, s.model))});
  });
}

}  // namespace

void acp_file_io(session_ptr self, FileIo io, caf::typed_response_promise<FileIoDone> promise) {
  auto& st = self->state;
  FileIoDone none;
  if (!st.acp_sessions.count(io.session_id) || !st.acp_caps.read_text_file || !st.acp_caps.write_text_file) {
    none.errors["*"] = "the client does not edit files for this session";
    promise.deliver(std::move(none));
    return;
  }
  // One request per file; the answer goes back when the last reply came.
  auto done = std::make_shared<FileIoDone>();
  auto left = std::make_shared<size_t>(io.reads.size() + io.writes.size());
  if (*left == 0) {
    promise.deliver(std::move(none));
    return;
  }
  auto settle = [=]() mutable {
    if (--*left == 0) promise.deliver(std::move(*done));
  };
  std::string lines;
  auto session_id = io.session_id;
  auto ask = [&](const std::string& path, std::string method, std::string params, bool is_read,
                 std::string written = {}) {
    PendingApproval pending;
    pending.on_reply = [=](const std::optional<json::Element>& result, const std::string& error) mutable {
      if (!result) {
        done->errors[path] = error;
      } else if (!is_read) {  // the prompt's diffs show what the editor now has
        auto s = self->state.acp_sessions.find(session_id);
        if (s != self->state.acp_sessions.end() && s->second.turn) s->second.turn->wrote(path, written);
      } else if (auto content = acp::read_text_file_content(*result)) {
        done->texts[path] = std::move(*content);
      } else {
        done->errors[path] = "the client's answer has no content";
      }
      settle();
    };
    add_line(lines, st.rpc.request(st.outgoing.add(std::move(pending)), method, params));
  };
  for (const auto& path : io.reads) ask(path, "fs/read_text_file", acp::read_text_file_params(io.session_id, path), true);
  for (const auto& [path, content] : io.writes)
    ask(path, "fs/write_text_file", acp::write_text_file_params(io.session_id, path, content), false, content);
  write(self, std::move(lines));
}

bool acp_on_event(session_ptr self, const std::string& conversation_id, const Event& ev, std::string& lines) {
  auto& st = self->state;
  auto it = st.acp_sessions.find(conversation_id);
  if (it == st.acp_sessions.end()) return false;
  auto& s = it->second;
  // A configured MCP server's question: nobody can answer it here (ACP has no forms yet).
  if (const auto* e = ev.msg.get_if<ElicitationRequestEvent>())
    caf::anon_send(s.conversation, submit_atom::value,
                   answer_submission(PendingApproval{s.conversation, e->id, AskKind::elicitation, e->server_name},
                                     std::nullopt));
  if (!s.turn) return true;  // nothing asked: nothing to stream
  auto& notes = st.notes;  // kept: its buffer has grown already
  notes.clear();
  s.turn->translate(ev, notes);
  add_notes(st.rpc, lines, notes);
  if (auto ask = acp::permission_request(conversation_id, ev)) {
    s.turn->asked(ask->call_id);
    auto id = st.outgoing.add(
        PendingApproval{s.conversation, ask->call_id, ask->patch ? AskKind::patch : AskKind::exec, {}});
    add_line(lines, st.rpc.request(id, "session/request_permission", ask->params));
  }
  notes.clear();
  if (auto answer = s.turn->finish(ev, notes)) {
    add_notes(st.rpc, lines, notes);
    // The updates go out before the answer (ACP: nothing of a prompt after its response).
    if (!lines.empty()) {
      write(self, std::move(lines));
      lines.clear();
    }
    if (!s.prompt) {  // its prompt was refused or failed already
      s.turn.reset();
      return true;
    }
    auto reply = std::move(*s.prompt);
    s.prompt.reset();
    s.turn.reset();
    if (answer->error) reply(RpcError{rpc::kInternalError, *answer->error});
    else reply(RawJson{*answer->result});
  }
  return true;
}

Submission acp_permission_answer(const PendingApproval& pending, const std::optional<json::Element>& result) {
  auto decision = acp::decision_of(result);
  if (pending.kind == AskKind::patch) return Submission{"", PatchApprovalOp{pending.call_id, decision}};
  return Submission{"", ExecApprovalOp{pending.call_id, decision}};
}

void bind_acp_methods(Methods& t) {
  constexpr auto acp = rpc::Export::no;
  t.bind<acp::InitializeParams, RawJson>("initialize", initialize, acp);
  t.bind<acp::AuthenticateParams, RawJson>("authenticate", authenticate, acp);
  t.bind<acp::NewSessionParams, RawJson>("session/new", new_session, acp);
  t.bind<acp::LoadSessionParams, RawJson>("session/load", load_session, acp);
  t.bind<acp::ListSessionsParams, RawJson>("session/list", list_sessions, acp);
  t.bind<acp::PromptParams, RawJson>("session/prompt", prompt, acp);
  t.bind<acp::SetModeParams, RawJson>("session/set_mode", set_mode, acp);
  t.bind<acp::SetConfigOptionParams, RawJson>("session/set_config_option", set_config_option, acp);
  t.on<acp::SessionIdParams>("session/cancel", cancel);
}

}  // namespace llmx::session_detail
