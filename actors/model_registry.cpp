#include "actors/model_registry.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "protocol/base/log.hpp"
#include "transport/http_client.hpp"

namespace llmx {

namespace {

// A fetch that has not ended by then is given up (the table stands in until the next one).
constexpr auto kFetchTimeout = std::chrono::seconds(10);
// A failed fetch is tried again after this at most (sooner when the TTL is shorter).
constexpr int64_t kRetryMs = 30000;
constexpr size_t kMaxBody = 16 * 1024 * 1024;

// When a list arrived, for people (wall time).
int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// When the next fetch is due (a clock that never jumps back).
int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kMaxTtlMs = int64_t{7} * 24 * 3600 * 1000;

// Runs on the HTTP loop: collects one GET's answer and posts it to the registry.
class FetchHandler : public http::Handler {
 public:
  FetchHandler(const model_registry_actor& registry, std::string key, uint64_t generation, uint32_t part)
      : registry_(caf::actor_cast<caf::weak_actor_ptr>(registry)) {
    done_.provider_key = std::move(key);
    done_.generation = generation;
    done_.part = part;
  }
  void on_head(const http::ResponseHead& head) override { done_.status = head.status; }
  void on_body(std::string_view chunk) override {
    if (done_.body.size() + chunk.size() > kMaxBody) {
      too_large_ = true;
      throw std::length_error("answer too large");  // the loop aborts the transfer
    }
    done_.body.append(chunk);
  }
  void on_done(const std::string& error) override {
    // Cancelled: the registry gave up on it (timeout, exit) and knows; this loop may outlive it.
    if (error == http::kCancelled && !too_large_) return;
    if (!error.empty()) {
      done_.status = 0;
      done_.error = too_large_ ? fmt::format("the answer exceeds {} MiB", kMaxBody >> 20) : error;
      done_.body.clear();
    }
    if (auto registry = caf::actor_cast<caf::strong_actor_ptr>(registry_))
      caf::anon_send(caf::actor_cast<model_registry_actor>(registry), std::move(done_));
  }

 private:
  caf::weak_actor_ptr registry_;
  ModelsFetched done_;
  bool too_large_ = false;
};

struct Waiting {
  caf::typed_response_promise<models::ModelCatalog> promise;
  uint64_t deadline_id = 0;
};

// One provider (by ModelProviderInfo::cache_key).
struct Entry {
  ModelProviderInfo provider;
  std::optional<models::ModelCatalog> catalog;  // none until the first fetch ended
  int64_t next_fetch_ms = 0;                    // a fetch is due from then on
  uint64_t generation = 0;                      // of the fetch running (or the last one)
  bool fetching = false;
  std::vector<http::RequestId> requests;
  std::optional<models::FetchResult> list, info;
  size_t parts_left = 0;
  std::vector<Waiting> waiting;
  uint64_t waits = 0;
  std::optional<std::string> wire_fallback;  // why an `auto` provider takes Chat
};

struct RegistryState {
  RegistryState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  std::map<std::string, Entry> providers;
  static inline const char* name = "llmx.model_registry";
};

using registry_ptr = model_registry_actor::stateful_pointer<RegistryState>;

void start_fetch(registry_ptr self, const std::string& key, Entry& e) {
  e.fetching = true;
  ++e.generation;
  e.list.reset();
  e.info.reset();
  e.requests.clear();
  auto headers = provider_headers(e.provider, resolve_bearer_token(e.provider));
  headers.emplace_back("Accept", "application/json");
  // A fetch every few minutes gains nothing from keep-alive; closing leaves the pool's
  // connections to the model streams.
  headers.emplace_back("Connection", "close");
  auto get = [&](std::string url, uint32_t part) {
    http::Request req;
    req.method = "GET";
    req.url = std::move(url);
    req.headers = headers;
    req.connect_timeout_ms = 5000;
    auto me = caf::actor_cast<model_registry_actor>(self);
    e.requests.push_back(http::Client::shared().start(std::move(req),
                                                      std::make_shared<FetchHandler>(me, key, e.generation, part)));
  };
  bool info = wants_model_info(e.provider);
  e.parts_left = info ? 2 : 1;
  get(e.provider.models_url(), 0);
  if (info) get(e.provider.model_info_url(), 1);
  self->delayed_send(self, kFetchTimeout, timeout_atom::value, key, e.generation);
}

void answer_waiting(Entry& e) {
  for (auto& w : e.waiting) w.promise.deliver(*e.catalog);
  e.waiting.clear();
}

void finish_fetch(Entry& e) {
  e.fetching = false;
  e.requests.clear();
  auto previous = e.catalog ? &*e.catalog : nullptr;
  auto catalog = models::catalog_from(*e.list, e.info, previous, wall_ms());
  int64_t ttl_ms = std::clamp<int64_t>(e.provider.models_cache_ttl_secs, 0, kMaxTtlMs / 1000) * 1000;
  // A live list that is not the previous one kept after a failure.
  bool fresh = catalog.source == "provider" && (!previous || catalog.fetched_at_ms != previous->fetched_at_ms);
  e.next_fetch_ms = now_ms() + (fresh ? ttl_ms : std::min(ttl_ms, kRetryMs));
  if (!fresh) log::info("models of provider `{}`: {}", e.provider.id, catalog.note.value_or("no list"));
  e.catalog = std::move(catalog);
  answer_waiting(e);
}

// The entry of this provider, its settings refreshed (a later query may carry a new key or TTL),
// and a fetch started when one is due.
Entry& touch(registry_ptr self, const ModelProviderInfo& provider, bool refresh) {
  auto key = provider.cache_key();
  auto& e = self->state.providers[key];
  e.provider = provider;
  if (!e.fetching && (refresh || now_ms() >= e.next_fetch_ms)) start_fetch(self, key, e);
  return e;
}

model_registry_actor::behavior_type registry_impl(registry_ptr self) {
  // Leaving: fetches are cancelled and whoever waits gets the table (no query goes unanswered).
  self->set_exit_handler([=](caf::exit_msg& msg) {
    for (auto& [_, e] : self->state.providers) {
      for (auto id : e.requests) http::Client::shared().cancel(id);
      for (auto& w : e.waiting) w.promise.deliver(models::builtin_catalog("llmx is shutting down"));
      e.waiting.clear();
    }
    self->quit(msg.reason);
  });
  return {
      [=](ModelsQuery& q) -> caf::result<models::ModelCatalog> {
        auto& e = touch(self, q.provider, q.refresh);
        if (e.catalog && !(q.refresh && e.fetching && q.wait_ms > 0)) return *e.catalog;
        if (q.wait_ms <= 0)
          return models::builtin_catalog("the provider's model list is being fetched; showing llmx's built-in models "
                                         "until it arrives");
        auto promise = self->make_response_promise<models::ModelCatalog>();
        e.waiting.push_back(Waiting{promise, ++e.waits});
        self->delayed_send(self, std::chrono::milliseconds(q.wait_ms), idle_atom::value, q.provider.cache_key(),
                           e.waits);
        return promise;
      },
      [=](ModelLookup& q) -> models::ModelSpec {
        auto& e = touch(self, q.provider, false);
        static const models::ModelCatalog none;
        return models::spec_of(e.catalog ? *e.catalog : none, q.model, q.provider.wire_api, e.wire_fallback);
      },
      [=](WireFallback& f) {
        auto& e = self->state.providers[f.provider_key];
        if (e.wire_fallback) return;
        e.wire_fallback = f.reason;
        log::warn("provider `{}` does not serve the Responses API ({}); llmx speaks Chat Completions to it from now on",
                  f.provider_id, f.reason);
      },
      [=](ModelsFetched& f) {
        auto it = self->state.providers.find(f.provider_key);
        if (it == self->state.providers.end()) return;
        auto& e = it->second;
        if (!e.fetching || f.generation != e.generation) return;
        models::FetchResult r{f.status, std::move(f.body), std::move(f.error)};
        (f.part == 0 ? e.list : e.info) = std::move(r);
        if (--e.parts_left == 0) finish_fetch(e);
      },
      [=](timeout_atom, const std::string& key, uint64_t generation) {
        auto it = self->state.providers.find(key);
        if (it == self->state.providers.end()) return;
        auto& e = it->second;
        if (!e.fetching || generation != e.generation) return;
        for (auto id : e.requests) http::Client::shared().cancel(id);
        auto slow = models::FetchResult{0, {}, fmt::format("no answer within {} s", kFetchTimeout.count())};
        if (!e.list) e.list = slow;
        if (!e.info && wants_model_info(e.provider)) e.info = slow;
        e.parts_left = 0;
        finish_fetch(e);
      },
      [=](idle_atom, const std::string& key, uint64_t wait) {
        auto it = self->state.providers.find(key);
        if (it == self->state.providers.end()) return;
        auto& waiting = it->second.waiting;
        for (auto w = waiting.begin(); w != waiting.end(); ++w)
          if (w->deadline_id == wait) {
            w->promise.deliver(it->second.catalog
                                   ? *it->second.catalog
                                   : models::builtin_catalog("the provider's model list did not answer in time; "
                                                             "showing llmx's built-in models until it does"));
            waiting.erase(w);
            return;
          }
      },
  };
}

}  // namespace

model_registry_actor spawn_model_registry(caf::actor_system& sys) { return sys.spawn(registry_impl); }

}  // namespace llmx
