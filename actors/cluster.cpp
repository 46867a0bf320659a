// The front's cluster manager (see node.hpp): attaches to worker nodes through CAF's middleman,
// places conversations on them and hands sessions proxies for them.
#include <fmt/format.h>

#include "actors/conversation_proxy.hpp"
#include "actors/network/caf_network.hpp"
#include "actors/node.hpp"
#include "actors/refusal.hpp"
#include "actors/rollout_store.hpp"
#include "protocol/config/provider.hpp"
#include "protocol/store/thread_index.hpp"

#include <filesystem>
#include <unordered_map>

namespace llmx {

namespace {

using namespace std::chrono_literals;

// How long a placement waits for a node while the first connections are still being made.
constexpr auto kPlacementWait = 10s;

struct Slot {
  NodeAddress address;
  node_actor node;                     // while attached
  conversation_manager_actor manager;  // this front's manager on the node, while attached
  bool tried = false;                  // one connection attempt has ended (either way)
  bool connecting = false;
  std::string error;                   // why the last attempt failed or the node was lost
  size_t conversations = 0;            // this front's live conversations there
  size_t pending = 0;                  // placements sent there and not answered yet
  bool ready() const { return static_cast<bool>(manager); }
  size_t load() const { return conversations + pending; }
};

constexpr uint32_t kUnplaced = UINT32_MAX;  // its node was lost; the next op places it again

struct Placement {
  conversation_proxy_actor proxy;
  uint32_t slot = kUnplaced;
};

struct ClusterState {
  ClusterState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  rollout_store_actor store;
  ClusterOptions options;
  std::vector<Slot> slots;
  std::map<std::string, Placement> conversations;  // by conversation id
  std::unordered_map<caf::actor_addr, std::string> ids;  // the same, by proxy address (down messages)
  // Work that waits for a node to attach (only while some first attempt is still running).
  std::vector<std::function<void()>> waiting;
  // Requests on their way to a node, settled by its loss if their answer never comes (CAF 0.17
  // does not answer requests whose connection dropped).
  struct Ticket {
    uint32_t slot;
    std::function<void()> lost;
  };
  uint64_t next_ticket = 0;
  std::map<uint64_t, Ticket> tickets;
  std::optional<caf::typed_response_promise<bool>> shutdown_promise;
  bool store_down = false;       // its down message came (monitored from the start)
  bool releasing_store = false;  // shutdown told the store to quit and waits for it to be down
  static inline const char* name = "llmx.cluster_manager";
};

using cluster_ptr = cluster_manager_actor::stateful_pointer<ClusterState>;

caf::io::middleman_actor connector(cluster_ptr self) {
  return network::connector(self->system(), self->state.options.tls);
}

std::string node_errors(const ClusterState& st) {
  std::string out;
  for (const auto& s : st.slots)
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s.address.text(), s.error.empty() ? "not attached" : s.error);
  return out;
}

// The attached node with the fewest conversations of this front; nullopt when none is.
std::optional<uint32_t> pick(const ClusterState& st) {
  std::optional<uint32_t> best;
  for (uint32_t i = 0; i < st.slots.size(); ++i)
    if (st.slots[i].ready() && (!best || st.slots[i].load() < st.slots[*best].load())) best = i;
  return best;
}

// Moves a conversation's entry to slot `i` (kUnplaced: none), keeping the per-node counts.
void assign(ClusterState& st, Placement& p, uint32_t i) {
  if (p.slot != kUnplaced && st.slots[p.slot].conversations > 0) --st.slots[p.slot].conversations;
  p.slot = i;
  if (i != kUnplaced) ++st.slots[i].conversations;
}

// Runs `work` with a node index once one is attached, or fails it with `fail` when none can be.
// The node counts the placement as pending until `work` calls `placed(i)`, so a burst of new
// conversations spreads instead of all landing on the node that was emptiest at its start.
// Until every node's first connection attempt has ended, placements wait (at most the connect
// timeout), so the first burst spreads over all nodes instead of the first one to answer.
void with_node(cluster_ptr self, std::function<void(uint32_t)> work, std::function<void(caf::error)> fail) {
  auto& st = self->state;
  bool first_attempts_running = false;
  for (const auto& s : st.slots) first_attempts_running |= !s.tried;
  if (!first_attempts_running) {
    if (auto i = pick(st)) {
      ++st.slots[*i].pending;
      return work(*i);
    }
    return fail(refuse(Refusal::internal, "no worker node is attached: " + node_errors(st)));
  }
  st.waiting.push_back([=] { with_node(self, work, fail); });  // wake_waiting runs each once
  self->delayed_send(self, kPlacementWait, timeout_atom::value, std::string());  // wakes the waiters up
}

void placed(cluster_ptr self, uint32_t i) {
  auto& s = self->state.slots[i];
  if (s.pending > 0) --s.pending;
}

// A request to slot i: settled exactly once, by its answer (settle() is true) or, when the node
// is lost first, by `lost`.
struct Ticket {
  uint64_t key;
  std::shared_ptr<bool> done;
};

Ticket open_ticket(cluster_ptr self, uint32_t i, std::function<void()> lost) {
  auto& st = self->state;
  Ticket t{st.next_ticket++, std::make_shared<bool>(false)};
  st.tickets.emplace(t.key, ClusterState::Ticket{i, [done = t.done, lost = std::move(lost)] {
                                                   if (!std::exchange(*done, true)) lost();
                                                 }});
  return t;
}

bool settle(cluster_ptr self, const Ticket& t) {
  self->state.tickets.erase(t.key);
  return !std::exchange(*t.done, true);
}

std::string lost_text(const ClusterState& st, uint32_t i) {
  return fmt::format("the worker node {} was lost before it answered; try again", st.slots[i].address.text());
}

// What a client reads for a failed connect or attach: llmx's own text, or CAF's rendering.
std::string describe(caf::actor_system& sys, const caf::error& err) {
  return err.category() == caf::atom("llmx") ? error_text(err) : sys.render(err);
}

void wake_waiting(cluster_ptr self) {
  for (auto& w : std::exchange(self->state.waiting, {})) w();
}

void schedule_retry(cluster_ptr self, uint32_t i) {
  self->delayed_send(self, self->state.options.reconnect_interval, retry_atom::value, i);
}

void attach_failed(cluster_ptr self, uint32_t i, std::string why) {
  auto& s = self->state.slots[i];
  s.connecting = false;
  s.tried = true;
  s.error = std::move(why);
  wake_waiting(self);
  schedule_retry(self, i);
}

void connect(cluster_ptr self, uint32_t i) {
  auto& s = self->state.slots[i];
  if (s.connecting || s.ready() || self->state.shutdown_promise) return;
  s.connecting = true;
  self->request(connector(self), 10s, caf::connect_atom::value, s.address.host, s.address.port)
      .then(
          [=](caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>& ifs) {
            if (!ptr) return attach_failed(self, i, "nothing is published there");
            if (ifs != self->system().message_types<node_actor>())
              return attach_failed(self, i, "it is not an llmx node of this build (its interface differs)");
            auto node = caf::actor_cast<node_actor>(ptr);
            NodeAttach hello{kWireVersion, caf::actor_cast<caf::strong_actor_ptr>(self->state.store)};
            self->request(node, 10s, attach_atom::value, std::move(hello))
                .then(
                    [=](NodeAttached& a) {
                      auto manager = caf::actor_cast<conversation_manager_actor>(a.manager);
                      if (!manager) return attach_failed(self, i, "the node sent no conversation manager");
                      auto& s = self->state.slots[i];
                      s.connecting = false;
                      s.tried = true;
                      s.error.clear();
                      s.node = node;
                      s.manager = manager;
                      self->monitor(node);
                      wake_waiting(self);
                    },
                    [=](caf::error& err) { attach_failed(self, i, "refused: " + describe(self->system(), err)); });
          },
          [=](caf::error& err) { attach_failed(self, i, describe(self->system(), err)); });
}

// Nodes learn the front's key when their own environment has none for the provider.
Config for_node(Config cfg) {
  if (!cfg.provider.stored_api_key) {
    auto token = resolve_bearer_token(cfg.provider);
    if (token.token) cfg.provider.stored_api_key = *token.token;
  }
  return cfg;
}

// The thread a reference names: its id, or the one in its rollout file's name.
std::optional<std::string> id_of(const ThreadRef& ref) {
  if (ref.id) return ref.id;
  if (!ref.path) return std::nullopt;
  auto name = threads::parse_rollout_name(std::filesystem::path(*ref.path).filename().string());
  return name ? std::optional<std::string>(name->uuid) : std::nullopt;
}

conversation_proxy_actor adopt(cluster_ptr self, uint32_t i, conversation_actor conv, const SessionConfiguredEvent& sc,
                               const Config& cfg) {
  auto& st = self->state;
  ProxyStart start{sc.session_id, cfg, sc.rollout_path, st.slots[i].address.text(),
                   caf::actor_cast<cluster_manager_actor>(self)};
  auto proxy = spawn_conversation_proxy(self->system(), std::move(start), std::move(conv));
  self->monitor(proxy);
  auto& entry = st.conversations[sc.session_id];
  if (entry.proxy) st.ids.erase(entry.proxy.address());
  entry.proxy = proxy;
  st.ids[proxy.address()] = sc.session_id;
  assign(st, entry, i);
  // Started while the front shuts down: it ends with the others.
  if (st.shutdown_promise) caf::anon_send(proxy, submit_atom::value, Submission{"", ShutdownOp{}});
  return proxy;
}

using Started = caf::typed_response_promise<conversation_actor, SessionConfiguredEvent>;

// new_conv, or resume of a thread that is not live here, on the least loaded node.
void place(cluster_ptr self, Started promise, std::function<void(conversation_manager_actor, Started, uint32_t)> ask) {
  with_node(
      self, [=](uint32_t i) { ask(self->state.slots[i].manager, promise, i); },
      [=](caf::error err) mutable { promise.deliver(std::move(err)); });
}

// The store is down. Nodes that held a proxy for it made our middleman's broker monitor it, so
// the broker has its down message queued (CAF runs an actor's monitors newest first, and ours
// is the oldest). A round trip to each node, queued behind it, tells us the broker has taken it:
// CAF 0.17 never empties a stopped broker's mailbox, and a message from the store left there
// would keep the (detached) store alive and hang the host's ~actor_system forever.
void flush_nodes_then_quit(cluster_ptr self) {
  auto left = std::make_shared<size_t>(1);
  auto done = [=] {
    if (--*left > 0) return;
    self->state.shutdown_promise->deliver(true);
    self->quit();
  };
  for (auto& s : self->state.slots) {
    if (!s.node) continue;
    ++*left;
    self->request(s.node, 2s, sync_atom::value).then([=](bool) { done(); }, [=](caf::error&) { done(); });
  }
  done();
}

// Writes out what is queued at the store (at most 30 s), then ends it and waits for its down
// message: the shutdown answer means the store is gone, so a host may destroy its actor system.
void release_store_then_quit(cluster_ptr self) {
  auto end = [=] {
    auto& st = self->state;
    if (st.store_down) return flush_nodes_then_quit(self);
    st.releasing_store = true;  // the down handler goes on
    self->send_exit(st.store, caf::exit_reason::user_shutdown);
  };
  self->request(self->state.store, 30s, sync_atom::value).then([=](bool) { end(); }, [=](caf::error&) { end(); });
}

// Every conversation is gone. The managers this front has on its nodes end too (at most 10 s),
// so no node keeps a reference to our store; then the store is synced and released.
void finish_shutdown(cluster_ptr self) {
  auto& st = self->state;
  auto left = std::make_shared<size_t>(0);
  auto done = [=] {
    if (--*left == 0) release_store_then_quit(self);
  };
  ++*left;  // held until every request is out
  for (auto& s : st.slots) {
    if (!s.ready()) continue;
    ++*left;
    self->request(s.manager, 10s, shutdown_atom::value).then([=](bool) { done(); }, [=](caf::error&) { done(); });
  }
  done();
}

cluster_manager_actor::behavior_type cluster_impl(cluster_ptr self, rollout_store_actor store, ClusterOptions options) {
  auto& st0 = self->state;
  st0.store = std::move(store);
  st0.options = std::move(options);
  for (auto& a : st0.options.nodes) {
    Slot s;
    s.address = a;
    st0.slots.push_back(std::move(s));
  }
  self->monitor(st0.store);  // before any node can make the broker monitor it (see flush_nodes_then_quit)
  for (uint32_t i = 0; i < st0.slots.size(); ++i) connect(self, i);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.store.address()) {
      st.store_down = true;
      if (st.releasing_store) flush_nodes_then_quit(self);
      return;
    }
    if (auto found = st.ids.find(dm.source); found != st.ids.end()) {
      auto it = st.conversations.find(found->second);
      st.ids.erase(found);
      if (it != st.conversations.end()) {
        assign(st, it->second, kUnplaced);
        st.conversations.erase(it);
      }
      if (st.shutdown_promise && st.conversations.empty()) finish_shutdown(self);
      return;
    }
    for (uint32_t i = 0; i < st.slots.size(); ++i) {
      auto& s = st.slots[i];
      if (!s.node || s.node.address() != dm.source) continue;
      // Its conversations' proxies see their own down messages and end their turns; they are
      // placed again at their next op.
      s.node = node_actor{};
      s.manager = conversation_manager_actor{};
      s.pending = 0;
      for (auto& [_, p] : st.conversations)
        if (p.slot == i) assign(st, p, kUnplaced);
      // Requests it will never answer fail now.
      std::vector<std::function<void()>> lost;
      for (auto it = st.tickets.begin(); it != st.tickets.end();)
        if (it->second.slot == i) {
          lost.push_back(std::move(it->second.lost));
          it = st.tickets.erase(it);
        } else {
          ++it;
        }
      for (auto& f : lost) f();
      s.error = dm.reason == caf::exit_reason::remote_link_unreachable ? "lost: connection lost"
                                                                       : "lost: " + self->system().render(dm.reason);
      schedule_retry(self, i);
      return;
    }
  });
  return {
      [=](new_conv_atom, Config& cfg) -> caf::result<conversation_actor, SessionConfiguredEvent> {
        if (self->state.shutdown_promise) return refuse(Refusal::request, "the server is shutting down");
        auto promise = self->make_response_promise<conversation_actor, SessionConfiguredEvent>();
        auto shared = std::make_shared<Config>(for_node(std::move(cfg)));
        place(self, promise, [=](conversation_manager_actor manager, Started promise, uint32_t i) {
          auto t = open_ticket(self, i, [=]() mutable {
            promise.deliver(refuse(Refusal::internal, lost_text(self->state, i)));
          });
          self->request(manager, caf::infinite, new_conv_atom::value, *shared)
              .then(
                  [=](conversation_actor& conv, SessionConfiguredEvent& sc) mutable {
                    if (!settle(self, t)) return;
                    placed(self, i);
                    auto proxy = adopt(self, i, std::move(conv), sc, *shared);
                    promise.deliver(caf::actor_cast<conversation_actor>(proxy), std::move(sc));
                  },
                  [=](caf::error& err) mutable {
                    if (!settle(self, t)) return;
                    placed(self, i);
                    promise.deliver(std::move(err));
                  });
        });
        return promise;
      },
      [=](resume_atom, ResumeThread& req) -> caf::result<conversation_actor, SessionConfiguredEvent> {
        if (self->state.shutdown_promise) return refuse(Refusal::request, "the server is shutting down");
        auto promise = self->make_response_promise<conversation_actor, SessionConfiguredEvent>();
        auto shared = std::make_shared<ResumeThread>(std::move(req));
        shared->config = for_node(std::move(shared->config));
        auto id = shared->history ? std::nullopt : id_of(shared->ref);
        auto& st = self->state;
        auto live = id ? st.conversations.find(*id) : st.conversations.end();
        // `reserved`: the node counts this placement as pending (see with_node).
        auto ask = [=](bool reserved, conversation_manager_actor manager, Started promise, uint32_t i) {
          auto t = open_ticket(self, i, [=]() mutable {
            promise.deliver(refuse(Refusal::internal, lost_text(self->state, i)));
          });
          self->request(manager, caf::infinite, resume_atom::value, *shared)
              .then(
                  [=](conversation_actor& conv, SessionConfiguredEvent& sc) mutable {
                    if (!settle(self, t)) return;
                    if (reserved) placed(self, i);
                    auto& st = self->state;
                    if (auto it = st.conversations.find(sc.session_id); it != st.conversations.end()) {
                      // Already live here (two resumes raced, or its node was lost): one
                      // conversation per thread, the proxy's.
                      auto& entry = it->second;
                      if (entry.slot == kUnplaced) {
                        self->send(entry.proxy, place_atom::value, std::move(conv), st.slots[i].address.text());
                        assign(st, entry, i);
                      } else if (entry.slot != i) {
                        caf::anon_send(conv, submit_atom::value, Submission{"", ShutdownOp{}});
                      }
                      promise.deliver(caf::actor_cast<conversation_actor>(entry.proxy), std::move(sc));
                      return;
                    }
                    auto proxy = adopt(self, i, std::move(conv), sc, shared->config);
                    promise.deliver(caf::actor_cast<conversation_actor>(proxy), std::move(sc));
                  },
                  [=](caf::error& err) mutable {
                    if (!settle(self, t)) return;
                    if (reserved) placed(self, i);
                    promise.deliver(std::move(err));
                  });
        };
        // A live thread is resumed where it runs (one writer per rollout).
        if (live != st.conversations.end() && live->second.slot != kUnplaced && st.slots[live->second.slot].ready())
          ask(false, st.slots[live->second.slot].manager, promise, live->second.slot);
        else
          place(self, promise, [ask](conversation_manager_actor m, Started p, uint32_t i) { ask(true, m, p, i); });
        return promise;
      },
      [=](place_atom, ResumeThread& req) -> caf::result<conversation_actor, std::string> {
        auto promise = self->make_response_promise<conversation_actor, std::string>();
        auto shared = std::make_shared<ResumeThread>(std::move(req));
        with_node(
            self,
            [=](uint32_t i) mutable {
              auto t = open_ticket(self, i, [=]() mutable {
                promise.deliver(refuse(Refusal::internal, lost_text(self->state, i)));
              });
              self->request(self->state.slots[i].manager, caf::infinite, resume_atom::value, *shared)
                  .then(
                      [=](conversation_actor& conv, SessionConfiguredEvent& sc) mutable {
                        if (!settle(self, t)) return;
                        placed(self, i);
                        auto& st = self->state;
                        if (auto it = st.conversations.find(sc.session_id); it != st.conversations.end())
                          assign(st, it->second, i);
                        promise.deliver(std::move(conv), st.slots[i].address.text());
                      },
                      [=](caf::error& err) mutable {
                        if (!settle(self, t)) return;
                        placed(self, i);
                        promise.deliver(std::move(err));
                      });
            },
            [=](caf::error err) mutable { promise.deliver(std::move(err)); });
        return promise;
      },
      [=](archive_atom, ThreadRef& ref) -> caf::result<std::string> {
        auto& st = self->state;
        auto id = id_of(ref);
        auto live = id ? st.conversations.find(*id) : st.conversations.end();
        // A live conversation is shut down by its node's manager before the store moves it.
        if (live != st.conversations.end() && live->second.slot != kUnplaced && st.slots[live->second.slot].ready()) {
          const uint32_t i = live->second.slot;
          auto promise = self->make_response_promise<std::string>();
          auto t = open_ticket(self, i, [=]() mutable {
            promise.deliver(refuse(Refusal::internal, lost_text(self->state, i)));
          });
          self->request(st.slots[i].manager, caf::infinite, archive_atom::value, std::move(ref))
              .then(
                  [=](std::string& path) mutable {
                    if (settle(self, t)) promise.deliver(std::move(path));
                  },
                  [=](caf::error& err) mutable {
                    if (settle(self, t)) promise.deliver(std::move(err));
                  });
          return promise;
        }
        // A conversation whose node was lost has nothing running: its proxy ends here.
        if (live != st.conversations.end())
          caf::anon_send(live->second.proxy, submit_atom::value, Submission{"", ShutdownOp{}});
        return self->delegate(st.store, archive_atom::value, std::move(ref));
      },
      [=](timeout_atom, const std::string&) {
        // A placement waited long enough: whatever is attached now serves it, or it fails.
        for (auto& s : self->state.slots) s.tried = true;
        wake_waiting(self);
      },
      [=](find_conv_atom, const std::string& id) -> caf::result<conversation_actor> {
        auto& m = self->state.conversations;
        auto it = m.find(id);
        if (it == m.end()) return refuse(Refusal::request, "no such conversation: " + id);
        return caf::actor_cast<conversation_actor>(it->second.proxy);
      },
      [=](list_atom) {
        LoadedThreads loaded;
        for (const auto& [id, _] : self->state.conversations) loaded.ids.push_back(id);
        return loaded;
      },
      [=](retry_atom, uint32_t i) {
        if (i < self->state.slots.size()) connect(self, i);
      },
      [=](shutdown_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.shutdown_promise = self->make_response_promise<bool>();
        // Every live conversation shuts down on its node (turns aborted, rollouts written to
        // our store); their proxies end with them. Then the store is synced.
        for (auto& [_, p] : st.conversations) caf::anon_send(p.proxy, submit_atom::value, Submission{"", ShutdownOp{}});
        if (st.conversations.empty()) finish_shutdown(self);
        return *st.shutdown_promise;
      },
      // Conversations here are proxies, which never send these: each node's own manager decides
      // what its shutdown waits for, and every proxy is waited for.
      [=](task_atom, const std::string&) {},
      [=](idle_atom) {},
  };
}

}  // namespace

conversation_manager_actor spawn_cluster_manager(caf::actor_system& sys, rollout_store_actor store,
                                                 ClusterOptions options) {
  auto cluster = sys.spawn(cluster_impl, std::move(store), std::move(options));
  return caf::actor_cast<conversation_manager_actor>(cluster);
}

}  // namespace llmx
