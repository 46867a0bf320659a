// The conversation actor and the conversation manager (see actors.hpp for their interfaces).
#pragma once

#include <memory>

#include "actors/actors.hpp"

namespace llmx {

// How a conversation starts: fresh (a new rollout file with its session_meta line) or resumed
// from a stored thread (its history, appending to its file), or a fork of given items (`resumed`
// with an empty path: those items after the initial context, in a new file).
struct ConversationStart {
  std::string id;
  std::shared_ptr<const Config> config;  // never null
  rollout_store_actor store;
  std::string rollout_path;
  std::optional<LoadedThread> resumed;
  mcp_hub_actor mcp = {};  // the clients of configured MCP servers (set by the manager)
  model_registry_actor models = {};  // what providers serve (set by the manager)
  conversation_manager_actor manager = {};  // told of the first task (set by the manager)
};

// Spawns a conversation actor (its parent is the manager).
conversation_actor spawn_conversation(caf::local_actor* parent, ConversationStart start);

// `store` owns the rollout files; the manager syncs it when shutting down. `mcp` finds the
// clients of configured MCP servers for every conversation; `models` knows what providers serve
// (the wire a session_configured reports, the model facts of every task).
conversation_manager_actor spawn_conversation_manager(caf::actor_system& sys, rollout_store_actor store,
                                                      mcp_hub_actor mcp, model_registry_actor models);

}  // namespace llmx
