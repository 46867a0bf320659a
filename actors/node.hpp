// Worker nodes and the fronts that place conversations on them (issue 15), over CAF's middleman:
//
//   front (mcp-server / app-server / embedding host)          node (`llmx node`)
//   session ─► cluster manager ─── NodeAttach ──────────────► node actor
//      ▲            │  new_conv / resume ──────────────────► conversation manager (one per front)
//      │            ▼                                            │
//      └── conversation proxy ◄── ConversationEvents ──────── conversation ─► turn executor ...
//                   │ submit / interrupt ──────────────────────► ▲
//   rollout store ◄─┴──────────── RolloutAppend / LoadThread ────┘
//
// The proxy is the handle sessions keep: when its node dies it ends a running turn with an error
// event, and the next op resumes the conversation on a live node from the stored rollout.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/actors.hpp"

namespace llmx {

// This build's version and commit (generated/wire_version.cpp): a node and a front attach only
// when theirs are equal.
extern const char* const kWireVersion;

// A node's address, `host:port`.
struct NodeAddress {
  std::string host;
  uint16_t port = 0;
  std::string text() const;
};

// Parses `host:port` (IPv6 hosts in brackets). nullopt when malformed.
std::optional<NodeAddress> parse_node_address(std::string_view text);

// True for addresses that never leave the machine (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(std::string_view host);

// The node actor: answers attaches from fronts, starting one conversation manager per front
// (its conversations use `mcp` for configured MCP servers, shared by every front).
node_actor spawn_node(caf::actor_system& sys, mcp_hub_actor mcp, model_registry_actor models);

struct ClusterOptions {
  std::vector<NodeAddress> nodes;
  bool tls = false;  // connect through CAF's OpenSSL module (the system must have it loaded)
  // How often a node that is down (or not up yet) is tried again.
  std::chrono::milliseconds reconnect_interval{1000};
};

// The front's conversation manager: the same interface as a local one, placing each new
// conversation on the attached node with the fewest conversations of this front. `store` is
// the front's rollout store, which every node writes to.
conversation_manager_actor spawn_cluster_manager(caf::actor_system& sys, rollout_store_actor store,
                                                 ClusterOptions options);

}  // namespace llmx
