// The conversation methods for stored threads and settings both servers serve (DECISIONS P1,
// P8, P11, P12): listConversations, resumeConversation, archiveConversation,
// unarchiveConversation (llmx), getConversationSummary, setDefaultModel, model/list. Disk work
// happens in the rollout store; this file maps params and errors.
#include "actors/session_state.hpp"
#include "actors/rollout_store.hpp"
#include "protocol/rpc/account_api.hpp"
#include "protocol/config/config_write.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/model/model_catalog.hpp"

namespace llmx::session_detail {

namespace {

void list_conversations(session_ptr self, api::ListConversationsParams p, Reply<api::ListConversationsResult> reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  ListThreads req;
  req.home = cfg->llmx_home;
  req.query.page_size = static_cast<size_t>(std::max<int64_t>(1, p.pageSize.value_or(25)));
  req.query.cursor = p.cursor;
  if (p.modelProviders) req.query.model_providers = *p.modelProviders;
  if (p.sources) req.query.sources = *p.sources;
  req.query.default_provider = cfg->provider.id;
  auto default_provider = cfg->provider.id;
  self->request(self->state.store, caf::infinite, std::move(req))
      .then(
          [=](ThreadPage& tp) {
            auto& page = tp.page;
            api::ListConversationsResult r;
            for (const auto& t : page.items) r.items.push_back(api::summary_from(t, default_provider));
            r.nextCursor = page.next_cursor;
            reply(r);
          },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidParams, "failed to list conversations")); });
}

void resume_conversation(session_ptr self, api::ResumeConversationParams p, Reply<api::ResumeConversationResult> reply) {
  auto found = config_or_error(self, reply, [&] { return p.overrides ? p.overrides->to_overrides() : ConfigOverrides{}; });
  if (!found) return;
  Config cfg = std::move(*found);
  cfg.session_source = "mcp";
  ResumeThread req;
  req.ref.home = cfg.llmx_home;
  if (p.path) {
    req.ref.path = *p.path;
  } else if (p.conversationId) {
    if (!is_uuid(*p.conversationId))
      return reply(RpcError{rpc::kInvalidRequest,
                            fmt::format("failed to locate conversation id {}: not a UUID", *p.conversationId)});
    req.ref.id = *p.conversationId;
  } else if (p.history && !p.history->empty()) {
    req.history = *p.history;
  } else {
    return reply(RpcError{rpc::kInvalidRequest, "either path, conversation id or non empty history must be provided"});
  }
  req.config = std::move(cfg);
  self->request(self->state.manager, caf::infinite, resume_atom::value, std::move(req))
      .then(
          [=](conversation_actor conv, SessionConfiguredEvent& sc) {
            remember(self, sc.session_id, conv);
            api::SessionConfiguredNotification n{sc.session_id,       sc.model, sc.reasoning_effort, 0, 0,
                                                 sc.initial_messages, sc.rollout_path};
            notify(self, "sessionConfigured", json::to_json(n));
            reply(api::ResumeConversationResult{sc.session_id, sc.model, sc.initial_messages, sc.rollout_path});
          },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "error resuming conversation")); });
}

void archive_conversation(session_ptr self, api::ArchiveConversationParams p, Reply<Empty> reply) {
  if (!is_uuid(p.conversationId))
    return reply(RpcError{rpc::kInvalidRequest, fmt::format("invalid conversation id: {}", p.conversationId)});
  ThreadRef ref{llmx_home(), p.conversationId, p.rolloutPath};
  auto conv_id = p.conversationId;
  self->request(self->state.manager, caf::infinite, archive_atom::value, std::move(ref))
      .then(
          [=](std::string&) {
            forget_conversation(self, conv_id, "was archived");
            reply(Empty{});
          },
          [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to archive conversation")); });
}

void unarchive_conversation(session_ptr self, api::UnarchiveConversationParams p,
                            Reply<api::UnarchiveConversationResult> reply) {
  if (!is_uuid(p.conversationId))
    return reply(RpcError{rpc::kInvalidRequest, fmt::format("invalid conversation id: {}", p.conversationId)});
  auto conv_id = p.conversationId;
  self->request(self->state.store, caf::infinite, unarchive_atom::value, ThreadRef{llmx_home(), conv_id, {}})
      .then([=](std::string& path) { reply(api::UnarchiveConversationResult{conv_id, path}); },
            [=](caf::error& err) { reply(rpc_error_of(err, rpc::kInvalidRequest, "failed to unarchive conversation")); });
}

void set_default_model(session_ptr self, api::SetDefaultModelParams p, Reply<Empty> reply) {
  try {
    auto cfg = resolve_config(self);
    llmx::set_default_model(cfg.llmx_home, cfg.active_profile, p.model, p.reasoningEffort);
  } catch (const std::exception& err) {
    return reply(RpcError{rpc::kInternalError, fmt::format("failed to persist model selection: {}", err.what())});
  }
  reply(Empty{});
}

void get_conversation_summary(session_ptr self, api::GetConversationSummaryParams p,
                              Reply<api::GetConversationSummaryResult> reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  api::SummaryTarget target;
  try {
    target = api::summary_target(p, cfg->llmx_home);
  } catch (const std::invalid_argument& err) {
    return reply.error(rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what()));
  }
  if (target.bad_id)
    return reply.error(rpc::kInvalidRequest,
                       fmt::format("no rollout found for conversation id {}", target.id.value_or("")));
  auto provider = cfg->provider.id;
  auto where = target.path.value_or(target.id.value_or(""));
  self->request(self->state.store, caf::infinite, summary_atom::value, ThreadRef{cfg->llmx_home, target.id, target.path})
      .then(
          [=](ThreadSummaryReply& r) {
            reply(api::GetConversationSummaryResult{api::summary_from(r.summary, provider)});
          },
          [=](caf::error& err) {
            reply(rpc_error_of(err, rpc::kInvalidRequest, fmt::format("failed to load conversation summary from {}", where)));
          });
}

// model/list answers `items` on the MCP server (seed) and `data` on the app server (reference),
// DECISIONS P8: one handler, two result types.
template <class Result>
void model_list(session_ptr self, api::ModelListParams p, Reply<Result> reply) {
  auto cfg = config_or_error(self, reply);
  if (!cfg) return;
  std::optional<int64_t> limit = p.limit ? std::optional<int64_t>(*p.limit) : std::optional<int64_t>(p.pageSize);
  auto answer = [=](const models::ModelCatalog& catalog) {
    try {
      auto page = models::page_of(models::catalog_presets(catalog, cfg->model), p.cursor, limit);
      Result r;
      if constexpr (std::is_same_v<Result, api::ModelListData>)
        r.data = std::move(page.items);
      else
        r.items = std::move(page.items);
      r.nextCursor = page.next_cursor;
      r.source = catalog.source;
      r.note = catalog.note;
      reply(r);
    } catch (const std::invalid_argument& err) {
      reply(RpcError{rpc::kInvalidParams, fmt::format("Invalid params: {}", err.what())});
    }
  };
  with_catalog(self, cfg->provider, answer);
}

}  // namespace

// A first fetch has this long before the table answers (it goes on in the background).
constexpr int64_t kCatalogWaitMs = 3000;

void with_catalog(session_ptr self, const ModelProviderInfo& provider,
                  std::function<void(const models::ModelCatalog&)> next) {
  const auto& registry = self->state.options.models;
  if (!registry) return next(models::builtin_catalog("this server has no model registry; showing llmx's built-in models"));
  self->request(registry, caf::infinite, ModelsQuery{provider, kCatalogWaitMs, false})
      .then([=](models::ModelCatalog& catalog) { next(catalog); },
            [=](caf::error& err) {
              next(models::builtin_catalog(fmt::format("the model registry failed ({}); showing llmx's built-in models",
                                                       caf::to_string(err))));
            });
}

void bind_thread_methods(Methods& t, ModelListShape shape) {
  t.bind<api::ListConversationsParams, api::ListConversationsResult>("listConversations", list_conversations);
  t.bind<api::ResumeConversationParams, api::ResumeConversationResult>("resumeConversation", resume_conversation);
  t.bind<api::ArchiveConversationParams, Empty>("archiveConversation", archive_conversation);
  t.bind<api::UnarchiveConversationParams, api::UnarchiveConversationResult>("unarchiveConversation",
                                                                             unarchive_conversation);
  t.bind<api::GetConversationSummaryParams, api::GetConversationSummaryResult>("getConversationSummary",
                                                                               get_conversation_summary);
  t.bind<api::SetDefaultModelParams, Empty>("setDefaultModel", set_default_model);
  if (shape == ModelListShape::data)
    t.bind<api::ModelListParams, api::ModelListData>("model/list", model_list<api::ModelListData>);
  else
    t.bind<api::ModelListParams, api::McpModelListResult>("model/list", model_list<api::McpModelListResult>);
}

}  // namespace llmx::session_detail
