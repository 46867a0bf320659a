// The conversation manager (see actors.hpp): creates, resumes, finds and archives
// conversations, and shuts them all down with their rollouts written.
#include <fmt/format.h>

#include <unordered_map>

#include "actors/compaction.hpp"
#include "actors/conversation.hpp"
#include "actors/refusal.hpp"
#include "actors/rollout_store.hpp"
#include "actors/shutdown_plan.hpp"
#include "protocol/model/environment_context.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/store/rollout.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx {

namespace {

struct ManagerState {
  ManagerState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  rollout_store_actor store;
  mcp_hub_actor mcp;
  model_registry_actor models;
  std::map<std::string, conversation_actor> conversations;
  // The id of each live conversation by its address: a down message finds its entry at once
  // (a scan per down made shutting 100,000 conversations down quadratic).
  std::unordered_map<caf::actor_addr, std::string> ids;
  // Archive requests waiting for their conversation to shut down, by conversation id.
  struct PendingArchive {
    ThreadRef ref;
    caf::typed_response_promise<std::string> promise;
  };
  std::multimap<std::string, PendingArchive> archiving;
  std::optional<caf::typed_response_promise<bool>> shutdown_promise;
  ShutdownPlan shutdown;                 // what a shutdown waits for (conversations that ran a task)
  std::vector<conversation_actor> idle;  // after the shutdown's reply: those still to end
  // The settings the last conversation started with: the next one with equal settings (nearly
  // every one a session starts) shares them instead of holding its own 2-3 KB copy.
  std::shared_ptr<const Config> last_config;
  static inline const char* name = "llmx.conversation_manager";
};

using manager_ptr = conversation_manager_actor::stateful_pointer<ManagerState>;

// The registry's word on the model, else the wire as configured (`auto` resolved the registry's way).
models::ModelSpec spec_or_configured(const std::optional<models::ModelSpec>& model, const Config& cfg) {
  return model ? *model : models::spec_of({}, cfg.model, cfg.provider.wire_api);
}

SessionConfiguredEvent configured_event(const std::string& id, const Config& cfg, const std::string& path,
                                        const std::optional<models::ModelSpec>& model) {
  SessionConfiguredEvent sc;
  sc.session_id = id;
  sc.model = cfg.model;
  sc.reasoning_effort = cfg.reasoning_effort;
  sc.rollout_path = path;
  auto spec = spec_or_configured(model, cfg);
  sc.wire_api = std::string(enum_name(spec.wire));
  sc.wire_api_fallback = spec.wire_note;
  if (cfg.sandbox_policy.mode != SandboxMode::danger_full_access) {
    const auto& support = sandbox::probe();  // cached after the first conversation
    if (!support.complete())
      sc.sandbox_warning = fmt::format("the {} sandbox cannot be fully enforced here ({}); sandbox_fallback = {}",
                                       enum_name(cfg.sandbox_policy.mode), support.summary, cfg.sandbox_fallback);
  }
  return sc;
}

using Started = caf::typed_response_promise<conversation_actor, SessionConfiguredEvent>;

// Asks the model registry what the provider takes (which also starts fetching its models, so the
// first turn finds them), then goes on with the answer (none when the registry cannot say).
template <class F>
void with_model(manager_ptr self, ModelLookup q, F next) {
  if (!self->state.models) return next(std::optional<models::ModelSpec>{});
  self->request(self->state.models, caf::infinite, std::move(q))
      .then([=](models::ModelSpec& spec) mutable { next(std::optional<models::ModelSpec>{std::move(spec)}); },
            [=](caf::error&) mutable { next(std::optional<models::ModelSpec>{}); });
}

std::shared_ptr<const Config> shared_config(manager_ptr self, Config cfg) {
  auto& last = self->state.last_config;
  if (!last || !(*last == cfg)) last = std::make_shared<const Config>(std::move(cfg));
  return last;
}

conversation_actor start_conversation(manager_ptr self, ConversationStart start) {
  auto id = start.id;
  start.mcp = self->state.mcp;
  start.models = self->state.models;
  start.manager = self;
  auto conv = spawn_conversation(self, std::move(start));
  self->monitor(conv);
  self->state.ids.emplace(conv.address(), id);
  self->state.conversations.emplace(std::move(id), conv);
  return conv;
}

void load_stored(manager_ptr self, ResumeThread req, std::optional<models::ModelSpec> model, Started promise);

// A stored thread again (or a fork of it, or of given items), once the registry said what its
// provider takes.
void resume(manager_ptr self, ResumeThread req, std::optional<models::ModelSpec> model, Started promise) {
  if (req.history) {  // a fork of the given items: a new conversation and file
    auto id = new_uuid_v7();
    auto path = rollout::rollout_path(req.config.llmx_home, std::chrono::system_clock::now(), id);
    auto sc = configured_event(id, req.config, path, model);
    LoadedThread items;
    items.history = std::move(*req.history);
    auto conv = start_conversation(self, ConversationStart{id, shared_config(self, std::move(req.config)), self->state.store, path,
                                                           std::move(items)});
    promise.deliver(conv, std::move(sc));
    return;
  }
  // A live thread may have no file yet (nobody spoke in it) or its last lines still on their
  // way: it makes the file now, and the read is ordered behind its lines.
  if (req.ref.id)
    if (auto it = self->state.conversations.find(*req.ref.id); it != self->state.conversations.end()) {
      self->request(it->second, std::chrono::seconds(10), sync_atom::value)
          .then([=](bool) mutable { load_stored(self, std::move(req), std::move(model), promise); },
                [=](caf::error&) mutable { load_stored(self, std::move(req), std::move(model), promise); });
      return;
    }
  load_stored(self, std::move(req), std::move(model), promise);
}

// The stored thread read, then opened (or handed out when it is live).
void load_stored(manager_ptr self, ResumeThread req, std::optional<models::ModelSpec> model, Started promise) {
  auto cfg = std::make_shared<Config>(std::move(req.config));
  LoadThread load{std::move(req.ref), initial_context(*cfg), req.fork};
  // Its compactions replay as the conversation will compact from now on.
  load.user_budget = compaction::user_message_budget(*cfg, spec_or_configured(model, *cfg));
  const bool fork = req.fork;
  self->request(self->state.store, caf::infinite, std::move(load))
      .then(
          [=](LoadedThread& loaded) mutable {
            if (self->state.shutdown_promise) {  // it began while the store read: nothing new starts
              promise.deliver(refuse(Refusal::request, "llmx is shutting down"));
              return;
            }
            if (fork) {  // a new thread and file, starting with a copy of the stored lines
              auto id = new_uuid_v7();
              auto path = rollout::rollout_path(cfg->llmx_home, std::chrono::system_clock::now(), id);
              auto sc = configured_event(id, *cfg, path, model);
              sc.initial_messages = loaded.initial_messages;
              loaded.path.clear();
              auto conv = start_conversation(
                  self, ConversationStart{id, shared_config(self, std::move(*cfg)), self->state.store, path, std::move(loaded)});
              promise.deliver(conv, std::move(sc));
              return;
            }
            auto sc = configured_event(loaded.id, *cfg, loaded.path, model);
            sc.initial_messages = loaded.initial_messages;
            // One writer per rollout: a thread that is already live is handed out as it is.
            if (auto it = self->state.conversations.find(loaded.id); it != self->state.conversations.end()) {
              promise.deliver(it->second, std::move(sc));
              return;
            }
            auto id = loaded.id;
            auto path = loaded.path;
            auto conv = start_conversation(
                self, ConversationStart{id, shared_config(self, std::move(*cfg)), self->state.store, path, std::move(loaded)});
            promise.deliver(conv, std::move(sc));
          },
          [=](caf::error& err) mutable { promise.deliver(std::move(err)); });
}

void archive_stored(manager_ptr self, ThreadRef ref, caf::typed_response_promise<std::string> promise) {
  self->request(self->state.store, caf::infinite, archive_atom::value, std::move(ref))
      .then([=](std::string& path) mutable { promise.deliver(std::move(path)); },
            [=](caf::error& err) mutable { promise.deliver(std::move(err)); });
}

// How many idle conversations are told to end per turn of the manager's mailbox.
constexpr size_t kIdleSlice = 1000;

void end_idle_slice(manager_ptr self) {
  auto& idle = self->state.idle;
  for (size_t n = 0; n < kIdleSlice && !idle.empty(); ++n) {
    caf::anon_send(idle.back(), submit_atom::value, Submission{"", ShutdownOp{}});
    idle.pop_back();
  }
  // The next slice goes to the back of the scheduler's queue (a message to ourselves would run
  // before the work this slice just made, and so before everything older).
  if (idle.empty())
    self->quit();
  else
    self->delayed_send(self, std::chrono::milliseconds(1), idle_atom::value);
}

// Once the shutdown waits for nothing more (a conversation being archived has its file moved
// once it has ended): the store syncs, the caller hears, the rest end.
void finish_manager_shutdown(manager_ptr self) {
  if (!self->state.shutdown.sync(self->state.archiving.size())) return;
  sync_store_then(self, self->state.store, [=] {
    auto& st = self->state;
    if (!st.shutdown.synced(st.archiving.size())) return;
    st.shutdown_promise->deliver(true);
    for (auto& [_, conv] : st.conversations) st.idle.push_back(conv);
    end_idle_slice(self);
  });
}

conversation_manager_actor::behavior_type manager_impl(manager_ptr self, rollout_store_actor store, mcp_hub_actor mcp,
                                                      model_registry_actor models) {
  self->state.store = std::move(store);
  self->state.mcp = std::move(mcp);
  self->state.models = std::move(models);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (auto found = st.ids.find(dm.source); found != st.ids.end()) {
      auto id = std::move(found->second);
      st.ids.erase(found);
      st.conversations.erase(id);
      st.shutdown.ended(id);
      auto [b, e] = st.archiving.equal_range(id);
      for (auto a = b; a != e; ++a) archive_stored(self, a->second.ref, a->second.promise);
      st.archiving.erase(b, e);
    }
    finish_manager_shutdown(self);
  });
  return {
      [=](new_conv_atom, Config& cfg) -> caf::result<conversation_actor, SessionConfiguredEvent> {
        auto promise = self->make_response_promise<conversation_actor, SessionConfiguredEvent>();
        ModelLookup q{cfg.provider, cfg.model};  // before the continuation takes `cfg`
        with_model(self, std::move(q), [=, cfg = std::move(cfg)](std::optional<models::ModelSpec> model) mutable {
          if (self->state.shutdown_promise) {
            promise.deliver(refuse(Refusal::request, "llmx is shutting down"));
            return;
          }
          auto id = new_uuid_v7();
          auto path = rollout::rollout_path(cfg.llmx_home, std::chrono::system_clock::now(), id);
          auto sc = configured_event(id, cfg, path, model);
          auto conv = start_conversation(self, ConversationStart{id, shared_config(self, std::move(cfg)), self->state.store, path, {}});
          promise.deliver(conv, std::move(sc));
        });
        return promise;
      },
      [=](resume_atom, ResumeThread& req) -> caf::result<conversation_actor, SessionConfiguredEvent> {
        auto promise = self->make_response_promise<conversation_actor, SessionConfiguredEvent>();
        ModelLookup q{req.config.provider, req.config.model};  // before the continuation takes `req`
        with_model(self, std::move(q), [=, req = std::move(req)](std::optional<models::ModelSpec> model) mutable {
          if (self->state.shutdown_promise) {
            promise.deliver(refuse(Refusal::request, "llmx is shutting down"));
            return;
          }
          resume(self, std::move(req), std::move(model), promise);
        });
        return promise;
      },
      [=](archive_atom, ThreadRef& ref) -> caf::result<std::string> {
        auto promise = self->make_response_promise<std::string>();
        auto it = ref.id ? self->state.conversations.find(*ref.id) : self->state.conversations.end();
        if (it == self->state.conversations.end()) {
          archive_stored(self, std::move(ref), promise);
          return promise;
        }
        // Live: shut it down first; the down handler archives. At most 10 s, as the reference.
        auto id = *ref.id;
        self->state.archiving.emplace(id, ManagerState::PendingArchive{ref, promise});
        // A thread nobody spoke in yet has no file: it is made first, so there is one to move.
        caf::anon_send(it->second, sync_atom::value);
        caf::anon_send(it->second, submit_atom::value, Submission{"", ShutdownOp{}});
        self->delayed_send(self, std::chrono::seconds(10), timeout_atom::value, id);
        return promise;
      },
      [=](timeout_atom, const std::string& id) {
        auto& st = self->state;
        auto [b, e] = st.archiving.equal_range(id);
        for (auto a = b; a != e; ++a) archive_stored(self, a->second.ref, a->second.promise);
        st.archiving.erase(b, e);
        finish_manager_shutdown(self);
      },
      [=](find_conv_atom, const std::string& id) -> caf::result<conversation_actor> {
        auto it = self->state.conversations.find(id);
        if (it == self->state.conversations.end())
          return refuse(Refusal::request, "no such conversation: " + id);
        return it->second;
      },
      [=](list_atom) {
        LoadedThreads loaded;
        for (const auto& [id, _] : self->state.conversations) loaded.ids.push_back(id);
        return loaded;
      },
      [=](shutdown_atom) -> caf::result<bool> {
        auto& st = self->state;
        if (st.shutdown_promise) return refuse(Refusal::request, "llmx is shutting down");
        st.shutdown_promise = self->make_response_promise<bool>();
        for (const auto& id : st.shutdown.begin())
          caf::anon_send(st.conversations.at(id), submit_atom::value, Submission{"", ShutdownOp{}});
        finish_manager_shutdown(self);
        return *st.shutdown_promise;
      },
      [=](task_atom, const std::string& id) {
        auto& st = self->state;
        auto it = st.conversations.find(id);
        // A first task that began after the shutdown did: told now, and waited for.
        if (it != st.conversations.end() && st.shutdown.started(id))
          caf::anon_send(it->second, submit_atom::value, Submission{"", ShutdownOp{}});
      },
      [=](idle_atom) { end_idle_slice(self); },
  };
}

}  // namespace

conversation_manager_actor spawn_conversation_manager(caf::actor_system& sys, rollout_store_actor store,
                                                      mcp_hub_actor mcp, model_registry_actor models) {
  return sys.spawn(manager_impl, std::move(store), std::move(mcp), std::move(models));
}

}  // namespace llmx
