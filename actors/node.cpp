// The worker node's actor (see node.hpp): one conversation manager per attached front.
#include "actors/node.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

#include <fmt/format.h>

#include "actors/conversation.hpp"
#include "actors/refusal.hpp"

namespace llmx {

std::string NodeAddress::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

std::optional<NodeAddress> parse_node_address(std::string_view text) {
  NodeAddress a;
  std::string_view port;
  if (text.starts_with("[")) {
    auto close = text.find("]:");
    if (close == std::string_view::npos) return std::nullopt;
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) return std::nullopt;
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (a.host.empty() || port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
    return std::nullopt;
  a.port = static_cast<uint16_t>(value);
  return a;
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  // Addresses only: a name like `127.example.com` may resolve anywhere.
  const std::string h(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, h.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

namespace {

struct NodeState {
  NodeState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  mcp_hub_actor mcp;
  model_registry_actor models;
  struct Front {
    caf::actor_addr store;
    conversation_manager_actor manager;
  };
  std::vector<Front> fronts;
  static inline const char* name = "llmx.node";
};

using node_ptr = node_actor::stateful_pointer<NodeState>;

node_actor::behavior_type node_impl(node_ptr self, mcp_hub_actor mcp, model_registry_actor models) {
  self->state.mcp = std::move(mcp);
  self->state.models = std::move(models);
  // A front that goes away takes its conversations with it: they have nowhere left to write.
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& fronts = self->state.fronts;
    for (auto it = fronts.begin(); it != fronts.end(); ++it) {
      if (it->store == dm.source) {
        caf::anon_send(it->manager, shutdown_atom::value);
      } else if (it->manager.address() != dm.source) {
        continue;
      }
      fronts.erase(it);
      return;
    }
  });
  return {
      [=](attach_atom, NodeAttach& a) -> caf::result<NodeAttached> {
        if (a.version != kWireVersion)
          return refuse(Refusal::request,
                        fmt::format("llmx versions differ: this node runs {}, the front {}; run the same build on both",
                                    kWireVersion, a.version));
        auto store = caf::actor_cast<rollout_store_actor>(a.store);
        if (!store) return refuse(Refusal::request, "attach needs the front's rollout store");
        for (auto& f : self->state.fronts)  // the same front again (it reconnected)
          if (f.store == store.address()) return NodeAttached{kWireVersion, caf::actor_cast<caf::strong_actor_ptr>(f.manager)};
        auto manager = spawn_conversation_manager(self->system(), store, self->state.mcp, self->state.models);
        self->monitor(store);
        self->monitor(manager);
        self->state.fronts.push_back({store.address(), manager});
        return NodeAttached{kWireVersion, caf::actor_cast<caf::strong_actor_ptr>(manager)};
      },
      [=](sync_atom) { return true; },
  };
}

}  // namespace

node_actor spawn_node(caf::actor_system& sys, mcp_hub_actor mcp, model_registry_actor models) {
  return sys.spawn(node_impl, std::move(mcp), std::move(models));
}

}  // namespace llmx
