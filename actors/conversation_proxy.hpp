// The conversation proxy (conversation_proxy_actor in actors.hpp): how a front holds a
// conversation that lives on a worker node.
#pragma once

#include <string>

#include "actors/actors.hpp"

namespace llmx {

struct ProxyStart {
  std::string id;
  Config config;              // re-placement resumes with these settings
  std::string rollout_path;   // in the front's store
  std::string node;           // where it runs (`host:port`), for messages
  cluster_manager_actor cluster;
};

// A proxy for `remote`, subscribed to its events.
conversation_proxy_actor spawn_conversation_proxy(caf::actor_system& sys, ProxyStart start, conversation_actor remote);

}  // namespace llmx
