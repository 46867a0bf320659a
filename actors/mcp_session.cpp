#include "actors/mcp_session.hpp"

#include "actors/session_state.hpp"

#include <fmt/format.h>

#include "protocol/ids.hpp"
#include "protocol/log.hpp"
#include "protocol/json_codec.hpp"
#include "protocol/mcp.hpp"
#include "sandbox/approval.hpp"
#include "sandbox/parse_command.hpp"
#include "transport/curl_api.hpp"

namespace llmx {

using namespace session_detail;

namespace {

void finish(session_ptr self) {
  auto& st = self->state;
  if (st.finished) return;
  st.finished = true;
  // Conversations first (turns aborted, commands killed, rollouts synced), then the writer, so
  // their last events still reach the client and the session ends only when all is on disk.
  auto close_writer = [=] {
    self->request(self->state.writer, std::chrono::seconds(10), shutdown_atom::value)
        .then([=](bool) { self->quit(); }, [=](caf::error&) { self->quit(); });
  };
  self->request(st.manager, std::chrono::seconds(10), shutdown_atom::value)
      .then([=](bool) { close_writer(); }, [=](caf::error&) { close_writer(); });
}

void call_ended(session_ptr self, const std::string& conversation_id) { self->state.calls.erase(conversation_id); }

void start_turn(session_ptr self, const rpc::Id& id, const std::string& conv_id, conversation_actor conv,
                std::string prompt, std::optional<RawJson> progress, std::string sub_id) {
  ActiveCall call{id, sub_id, conv, std::move(progress)};
  auto starting = self->state.starting.find(id.json);
  if (starting != self->state.starting.end()) {
    call.cancelled = starting->second;  // cancelled before its conversation was ready
    self->state.starting.erase(starting);
  }
  self->state.calls[conv_id] = call;
  self->state.conversations[conv_id] = conv;
  self->send(conv, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
  caf::anon_send(conv, submit_atom::value, Submission{sub_id, UserInputOp{{TextInput{std::move(prompt)}}}});
  if (call.cancelled) caf::anon_send(conv, submit_atom::value, Submission{sub_id, InterruptOp{}});
}

void handle_llmx_tool(session_ptr self, const rpc::Incoming& in, const mcp::ToolCallParams& params) {
  if (!params.arguments || params.arguments->is_null())
    return reply(self, in.id, mcp::tool_error("Missing arguments for llmx tool-call; the `prompt` field is required."));
  mcp::LlmxToolArgs args;
  Config cfg;
  try {
    args = json::parse_as<mcp::LlmxToolArgs>(params.arguments->text);
    auto overrides = args.to_overrides();
    auto base = self->state.options.base_overrides;
    base.cli_overrides.insert(base.cli_overrides.end(), overrides.cli_overrides.begin(), overrides.cli_overrides.end());
    overrides.cli_overrides = base.cli_overrides;
    if (!overrides.model) overrides.model = base.model;
    if (!overrides.profile) overrides.profile = base.profile;
    if (!overrides.cwd) overrides.cwd = base.cwd;
    if (!overrides.approval_policy) overrides.approval_policy = base.approval_policy;
    if (!overrides.sandbox_mode) overrides.sandbox_mode = base.sandbox_mode;
    cfg = load_config(overrides);
  } catch (const json::DecodeError& err) {
    return reply(self, in.id, mcp::tool_error(fmt::format("Failed to parse configuration for LLMX tool: {}", err.what())));
  } catch (const ConfigError& err) {
    return reply(self, in.id,
                 mcp::tool_error(fmt::format("Failed to load LLMX configuration from overrides: {}", err.what())));
  }
  cfg.session_source = "mcp";
  std::optional<RawJson> progress;
  if (params._meta && !params._meta->progressToken.is_null()) progress = params._meta->progressToken;
  auto id = in.id;
  self->state.starting.emplace(id.json, false);
  self->request(self->state.manager, caf::infinite, new_conv_atom::value, std::move(cfg))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent sc) mutable {
            auto conv_id = sc.session_id;
            write(self, self->state.rpc.notification("llmx/event", mcp::event_params(id, Event{"", std::move(sc)})));
            start_turn(self, id, conv_id, conv, args.prompt, progress, id.as_plain_string());
          },
          [=](caf::error& err) {
            self->state.starting.erase(id.json);
            reply(self, id, mcp::tool_error("Failed to start LLMX session: " + self->system().render(err)));
          });
}

void handle_reply_tool(session_ptr self, const rpc::Incoming& in, const mcp::ToolCallParams& params) {
  if (!params.arguments || params.arguments->is_null())
    return reply(self, in.id,
                 mcp::tool_error("Missing arguments for llmx-reply tool-call; the `conversationId` and `prompt` "
                                 "fields are required."));
  mcp::ReplyToolArgs args;
  try {
    args = json::parse_as<mcp::ReplyToolArgs>(params.arguments->text);
  } catch (const json::DecodeError& err) {
    return reply(self, in.id, mcp::tool_error(fmt::format("Failed to parse configuration for LLMX tool: {}", err.what())));
  }
  if (!is_uuid(args.conversationId))
    return reply(self, in.id, mcp::tool_error("Failed to parse conversation_id: not a UUID: " + args.conversationId));
  if (auto it = self->state.calls.find(args.conversationId); it != self->state.calls.end())
    return reply(self, in.id,
                 mcp::tool_error(fmt::format("Conversation {} is already running a turn (request {}); wait for it "
                                             "to finish or cancel it first.",
                                             args.conversationId, it->second.request_id.json)));
  std::optional<RawJson> progress;
  if (params._meta && !params._meta->progressToken.is_null()) progress = params._meta->progressToken;
  auto id = in.id;
  auto conv_id = args.conversationId;
  self->state.starting.emplace(id.json, false);
  self->request(self->state.manager, caf::infinite, find_conv_atom::value, conv_id)
      .then(
          [=](conversation_actor conv) {
            start_turn(self, id, conv_id, conv, args.prompt, progress, id.as_plain_string());
          },
          [=](caf::error&) {
            self->state.starting.erase(id.json);
            reply(self, id, mcp::tool_error("Session not found for conversation_id: " + conv_id));
          });
}

void handle_request(session_ptr self, const rpc::Incoming& in) {
  auto& st = self->state;
  const auto& m = in.method;
  if (m == "initialize") {
    if (st.initialized) return reply_error(self, in.id, rpc::kInvalidRequest, "initialize called more than once");
    auto p = decode<mcp::InitializeParams>(self, in);
    if (!p) return;
    st.initialized = true;
    st.client_suffix = p->clientInfo.name + "; " + p->clientInfo.version;
    reply(self, in.id, mcp::initialize_result(mcp::negotiate_version(p->protocolVersion), user_agent(st.client_suffix)));
    // Load libcurl now, off the initialize path, so the first turn does not wait for it.
    http::preload_curl_async();
    return;
  }
  if (m == "ping") return reply(self, in.id, "{}");
  if (m == "logging/setLevel") {
    auto p = decode<mcp::SetLevelParams>(self, in);
    if (!p) return;
    if (!log::set_level(p->level))
      return reply_error(self, in.id, rpc::kInvalidParams, fmt::format("Invalid params: unknown log level `{}`", p->level));
    return reply(self, in.id, "{}");
  }
  if (m == "tools/list") return reply(self, in.id, mcp::tools_list_result());
  if (m == "resources/list") return reply(self, in.id, R"({"resources":[]})");
  if (m == "resources/templates/list") return reply(self, in.id, R"({"resourceTemplates":[]})");
  if (m == "resources/read") return reply(self, in.id, R"({"contents":[]})");
  if (m == "resources/subscribe" || m == "resources/unsubscribe") return reply(self, in.id, "{}");
  if (m == "prompts/list") return reply(self, in.id, R"({"prompts":[]})");
  if (m == "prompts/get") return reply(self, in.id, R"({"messages":[]})");
  if (m == "completion/complete") return reply(self, in.id, R"({"completion":{"values":[]}})");
  if (m == "tools/call") {
    auto p = decode<mcp::ToolCallParams>(self, in);
    if (!p) return;
    if (st.shutting_down) return reply(self, in.id, mcp::tool_error("The server is shutting down."));
    if (p->name == "llmx") return handle_llmx_tool(self, in, *p);
    if (p->name == "llmx-reply") return handle_reply_tool(self, in, *p);
    return reply(self, in.id, mcp::tool_error(fmt::format("Unknown tool '{}'", p->name)));
  }
  if (handle_account_method(self, in)) return;
  if (handle_conversation_method(self, in)) return;
  if (handle_thread_method(self, in)) return;
  reply_error(self, in.id, rpc::kMethodNotFound, fmt::format("Method not found: {}", m));
}

void handle_notification(session_ptr self, const rpc::Incoming& in) {
  if (in.method != "notifications/cancelled" || !in.params || !in.params->is_object()) {
    log::debug("notification `{}` ignored", in.method);
    return;
  }
  auto obj = in.params->get_object().value_unsafe();
  auto rid = obj.at_key("requestId");
  if (rid.error()) return;
  std::string rid_json = json::to_text(rid.value_unsafe());
  if (auto it = self->state.starting.find(rid_json); it != self->state.starting.end()) {
    it->second = true;
    return;
  }
  for (auto& [conv_id, call] : self->state.calls) {
    if (call.request_id.json != rid_json || call.cancelled) continue;
    call.cancelled = true;
    caf::anon_send(call.conversation, submit_atom::value, Submission{call.sub_id, InterruptOp{}});
    return;
  }
}

// Handles one event of a tools/call in flight; returns whether it was that call's event (its
// approvals are then asked through elicitation, not the v1 listener requests).
bool on_event(session_ptr self, const std::string& conversation_id, const Event& ev, std::string& lines) {
  auto& st = self->state;
  auto it = st.calls.find(conversation_id);
  if (it == st.calls.end()) return false;
  auto& call = it->second;
  if (ev.id != call.sub_id) return false;
  auto add = [&](std::string line) {
    if (!lines.empty()) lines.push_back('\n');
    lines.append(line);
  };
  if (!call.cancelled) {
    add(st.rpc.notification("llmx/event", mcp::event_params(call.request_id, ev)));
    if (call.progress_token)
      add(st.rpc.notification("notifications/progress", mcp::progress_params(*call.progress_token, ++call.progress, ev)));
  }
  // The final reply goes out after the notifications before it (task_complete first, §2.8).
  auto reply_now = [&](std::string_view result) {
    add(st.rpc.result(call.request_id, result));
  };
  const auto& ce_id = conversation_id;
  if (!call.cancelled) {
    std::optional<std::string> params;
    std::string approval_call_id;
    bool is_patch = false;
    if (auto* ex = ev.msg.get_if<ExecApprovalRequestEvent>()) {
      params = mcp::exec_elicitation_params(*ex, call.request_id, ev.id, sandbox::shell_join(ex->command));
      approval_call_id = ex->call_id;
    } else if (auto* pa = ev.msg.get_if<ApplyPatchApprovalRequestEvent>()) {
      params = mcp::patch_elicitation_params(*pa, call.request_id, ev.id);
      approval_call_id = pa->call_id;
      is_patch = true;
    }
    if (params) {
      auto rid = st.next_request_id++;
      st.approvals[rid] = SessionState::PendingApproval{call.conversation, approval_call_id, is_patch};
      add(st.rpc.request(rpc::Id::from_int(rid), "elicitation/create", *params));
    }
  }
  if (auto* err = ev.msg.get_if<ErrorEvent>()) {
    if (!call.answered && !call.cancelled) reply_now(mcp::tool_result(ce_id, err->message, true));
    call.answered = true;
  } else if (auto* done = ev.msg.get_if<TaskCompleteEvent>()) {
    if (!call.answered && !call.cancelled)
      reply_now(mcp::tool_result(ce_id, done->last_agent_message.value_or(""), false));
    call_ended(self, ce_id);
    return true;
  } else if (auto* aborted = ev.msg.get_if<TurnAbortedEvent>()) {
    // A cancelled request gets no reply at all (MCP cancellation rules, P6).
    if (!call.answered && !call.cancelled)
      reply_now(mcp::tool_result(ce_id, "Turn aborted: " + std::string(enum_name(aborted->reason)), true));
    call_ended(self, ce_id);
    return true;
  }
  return true;
}

void on_events(session_ptr self, ConversationEvents& batch) {
  std::string lines;
  for (const auto& ev : batch.events) {
    bool by_call = on_event(self, batch.conversation_id, ev, lines);
    forward_to_listeners(self, batch.conversation_id, ev, by_call, lines);
    note_rate_limits(self, ev, lines);
  }
  if (!lines.empty()) write(self, std::move(lines));
  // After eof, the last call's final lines are queued before the writer is told to stop.
  if (self->state.shutting_down && self->state.calls.empty()) finish(self);
}

// The client's answer to one of our elicitation/create requests. An error reply counts as
// denied (DECISIONS P3) so the turn never waits on it.
void on_client_reply(session_ptr self, const rpc::Incoming& in) {
  auto& st = self->state;
  std::optional<int64_t> id;
  try {
    json::Parser p;
    auto e = p.parse(in.id.json);
    if (e.is_int64()) id = e.get_int64().value_unsafe();
  } catch (const json::DecodeError&) {
  }
  auto it = id ? st.approvals.find(*id) : st.approvals.end();
  if (it == st.approvals.end()) {
    log::warn("reply to unknown request id {} ignored", in.id.json);
    return;
  }
  auto pending = it->second;
  st.approvals.erase(it);
  ReviewDecision decision = ReviewDecision::denied;
  if (in.kind == rpc::Incoming::Kind::response && in.result) {
    auto reply = mcp::read_elicitation_reply(*in.result);
    if (reply.action)
      decision = sandbox::parse_elicitation_reply(*reply.action, reply.content_decision);
    else if (reply.decision)
      decision = sandbox::parse_decision(*reply.decision);
  }
  Op op = pending.is_patch ? Op{PatchApprovalOp{pending.call_id, decision}} : Op{ExecApprovalOp{pending.call_id, decision}};
  caf::anon_send(pending.conversation, submit_atom::value, Submission{"", std::move(op)});
}

session_actor::behavior_type session_impl(session_ptr self, SessionState::Flavor flavor, line_writer_actor writer,
                                          conversation_manager_actor manager, rollout_store_actor store,
                                          McpSessionOptions options) {
  self->state.flavor = flavor;
  self->state.rpc = rpc::Encoder{flavor == SessionState::Flavor::mcp};  // the app server omits "jsonrpc"
  self->state.writer = std::move(writer);
  self->state.manager = std::move(manager);
  self->state.store = std::move(store);
  self->state.options = std::move(options);
  return {
      [=](line_atom, std::string& line) {
        rpc::Incoming in;
        try {
          in = rpc::classify(self->state.parser.parse(line));
        } catch (const json::DecodeError& err) {
          return reply_error(self, rpc::Id{}, rpc::kParseError, err.what());
        }
        switch (in.kind) {
          case rpc::Incoming::Kind::request:
            if (self->state.flavor == SessionState::Flavor::app) return handle_app_request(self, in);
            return handle_request(self, in);
          case rpc::Incoming::Kind::notification:
            if (self->state.flavor == SessionState::Flavor::app) return log::debug("notification `{}` ignored", in.method);
            return handle_notification(self, in);
          case rpc::Incoming::Kind::invalid: return reply_error(self, in.id, in.invalid_code, in.invalid_reason);
          case rpc::Incoming::Kind::response:
          case rpc::Incoming::Kind::error_response:
            return on_client_reply(self, in);
        }
      },
      [=](oversize_atom, uint64_t limit) {
        reply_error(self, rpc::Id{}, rpc::kInvalidRequest,
                    fmt::format("Invalid request: message exceeds the maximum line length of {} bytes", limit));
      },
      [=](eof_atom) {
        auto& st = self->state;
        st.shutting_down = true;
        if (st.calls.empty()) return finish(self);
        for (auto& [_, call] : st.calls) {
          call.cancelled = true;
          caf::anon_send(call.conversation, submit_atom::value, Submission{call.sub_id, InterruptOp{}});
        }
        self->delayed_send(self, std::chrono::seconds(5), shutdown_atom::value);
      },
      [=](shutdown_atom) { finish(self); },
      [=](ConversationEvents& batch) { on_events(self, batch); },
  };
}

}  // namespace

session_actor spawn_mcp_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, McpSessionOptions options) {
  return sys.spawn(session_impl, SessionState::Flavor::mcp, std::move(writer), std::move(manager), std::move(store),
                   std::move(options));
}

session_actor spawn_app_session(caf::actor_system& sys, line_writer_actor writer, conversation_manager_actor manager,
                                rollout_store_actor store, McpSessionOptions options) {
  return sys.spawn(session_impl, SessionState::Flavor::app, std::move(writer), std::move(manager), std::move(store),
                   std::move(options));
}

}  // namespace llmx
