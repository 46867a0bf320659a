// The MCP server's conversation methods for stored threads and settings (DECISIONS P1, P8,
// P11, P12): listConversations, resumeConversation, archiveConversation, unarchiveConversation
// (llmx), setDefaultModel, model/list. Disk work happens in the rollout store; this file maps
// params and errors.
#include "actors/session_state.hpp"
#include "actors/rollout_store.hpp"
#include "protocol/account_api.hpp"
#include "protocol/config_write.hpp"
#include "protocol/conversation_api.hpp"
#include "protocol/ids.hpp"
#include "protocol/model_catalog.hpp"

namespace llmx::session_detail {

namespace {

std::optional<Config> config_or_error(session_ptr self, const rpc::Incoming& in, const ConfigOverrides& o) {
  try {
    return load_config(o);
  } catch (const std::exception& err) {
    reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("error deriving config: {}", err.what()));
    return std::nullopt;
  }
}

void list_conversations(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::ListConversationsParams>(self, in);
  if (!p) return;
  auto cfg = config_or_error(self, in, self->state.options.base_overrides);
  if (!cfg) return;
  ListThreads req;
  req.home = cfg->llmx_home;
  req.query.page_size = static_cast<size_t>(std::max<int64_t>(1, p->pageSize.value_or(25)));
  req.query.cursor = p->cursor;
  if (p->modelProviders) req.query.model_providers = *p->modelProviders;
  if (p->sources) req.query.sources = *p->sources;
  req.query.default_provider = cfg->provider.id;
  auto id = in.id;
  auto default_provider = cfg->provider.id;
  self->request(self->state.store, caf::infinite, std::move(req))
      .then(
          [=](ThreadPage& tp) {
            auto& page = tp.page;
            api::ListConversationsResult r;
            for (const auto& t : page.items) r.items.push_back(api::summary_from(t, default_provider));
            r.nextCursor = page.next_cursor;
            reply(self, id, json::to_json(r));
          },
          [=](caf::error& err) {
            if (is_request_error(err))
              return reply_error(self, id, rpc::kInvalidParams, fmt::format("Invalid params: {}", error_text(err)));
            reply_error(self, id, rpc::kInternalError, fmt::format("failed to list conversations: {}", error_text(err)));
          });
}

void resume_conversation(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::ResumeConversationParams>(self, in);
  if (!p) return;
  auto base = self->state.options.base_overrides;
  auto cfg = config_or_error(self, in, p->overrides ? p->overrides->to_overrides(base) : base);
  if (!cfg) return;
  cfg->session_source = "mcp";
  ResumeThread req;
  req.ref.home = cfg->llmx_home;
  if (p->path) {
    req.ref.path = *p->path;
  } else if (p->conversationId) {
    if (!is_uuid(*p->conversationId))
      return reply_error(self, in.id, rpc::kInvalidRequest,
                         fmt::format("failed to locate conversation id {}: not a UUID", *p->conversationId));
    req.ref.id = *p->conversationId;
  } else if (p->history && !p->history->empty()) {
    req.history = *p->history;
  } else {
    return reply_error(self, in.id, rpc::kInvalidRequest,
                       "either path, conversation id or non empty history must be provided");
  }
  req.config = std::move(*cfg);
  auto id = in.id;
  self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            self->state.conversations[sc.session_id] = conv;
            api::SessionConfiguredNotification n;
            n.sessionId = sc.session_id;
            n.model = sc.model;
            n.reasoningEffort = sc.reasoning_effort;
            n.initialMessages = sc.initial_messages;
            n.rolloutPath = sc.rollout_path;
            write(self, self->state.rpc.notification("sessionConfigured", json::to_json(n)));
            api::ResumeConversationResult r{sc.session_id, sc.model, sc.initial_messages, sc.rollout_path};
            reply(self, id, json::to_json(r));
          },
          [=](caf::error& err) {
            if (is_request_error(err)) return reply_error(self, id, rpc::kInvalidRequest, error_text(err));
            reply_error(self, id, rpc::kInternalError, fmt::format("error resuming conversation: {}", error_text(err)));
          });
}

void archive_conversation(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::ArchiveConversationParams>(self, in);
  if (!p) return;
  if (!is_uuid(p->conversationId))
    return reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("invalid conversation id: {}", p->conversationId));
  ThreadRef ref{llmx_home(), p->conversationId, p->rolloutPath};
  auto id = in.id;
  self->request(self->state.manager, caf::infinite, archive_atom::value, std::move(ref))
      .then([=](std::string&) { reply(self, id, "{}"); },
            [=](caf::error& err) {
              if (is_request_error(err)) return reply_error(self, id, rpc::kInvalidRequest, error_text(err));
              reply_error(self, id, rpc::kInternalError, fmt::format("failed to archive conversation: {}", error_text(err)));
            });
}

void unarchive_conversation(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::UnarchiveConversationParams>(self, in);
  if (!p) return;
  if (!is_uuid(p->conversationId))
    return reply_error(self, in.id, rpc::kInvalidRequest, fmt::format("invalid conversation id: {}", p->conversationId));
  auto id = in.id;
  auto conv_id = p->conversationId;
  self->request(self->state.store, caf::infinite, unarchive_atom::value, ThreadRef{llmx_home(), conv_id, {}})
      .then([=](std::string& path) { reply(self, id, json::to_json(api::UnarchiveConversationResult{conv_id, path})); },
            [=](caf::error& err) {
              if (is_request_error(err)) return reply_error(self, id, rpc::kInvalidRequest, error_text(err));
              reply_error(self, id, rpc::kInternalError,
                          fmt::format("failed to unarchive conversation: {}", error_text(err)));
            });
}

void handle_set_default_model(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::SetDefaultModelParams>(self, in);
  if (!p) return;
  try {
    auto cfg = load_config(self->state.options.base_overrides);
    llmx::set_default_model(cfg.llmx_home, cfg.active_profile, p->model, p->reasoningEffort);
  } catch (const std::exception& err) {
    return reply_error(self, in.id, rpc::kInternalError, fmt::format("failed to persist model selection: {}", err.what()));
  }
  reply(self, in.id, "{}");
}

void model_list(session_ptr self, const rpc::Incoming& in) {
  auto p = decode<api::ModelListParams>(self, in);
  if (!p) return;
  auto cfg = config_or_error(self, in, self->state.options.base_overrides);
  if (!cfg) return;
  std::optional<int64_t> limit = p->limit ? std::optional<int64_t>(*p->limit) : std::optional<int64_t>(p->pageSize);
  try {
    auto page = models::list_models(cfg->model, p->cursor, limit);
    reply(self, in.id,
          api::model_list_result(page.items, page.next_cursor, self->state.flavor == SessionState::Flavor::app));
  } catch (const std::invalid_argument& err) {
    reply_error(self, in.id, rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what()));
  }
}

}  // namespace

bool handle_thread_method(session_ptr self, const rpc::Incoming& in) {
  const auto& m = in.method;
  if (m == "listConversations") return list_conversations(self, in), true;
  if (m == "resumeConversation") return resume_conversation(self, in), true;
  if (m == "archiveConversation") return archive_conversation(self, in), true;
  if (m == "unarchiveConversation") return unarchive_conversation(self, in), true;
  if (m == "setDefaultModel") return handle_set_default_model(self, in), true;
  if (m == "model/list") return model_list(self, in), true;
  return false;
}

}  // namespace llmx::session_detail
