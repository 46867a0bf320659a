#include "actors/network/caf_network.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include <chrono>
#include <vector>

namespace llmx::network {

void configure(caf::actor_system_config& cfg, const Tls& tls) {
  cfg.load<caf::io::middleman>();
  cfg.set("middleman.app-identifiers", std::vector<std::string>{"llmx"});
  // A host that vanishes without closing its connections (power, network cut) is noticed by
  // the missing heartbeats: its node is then lost like one that closed them.
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(2)});
  if (tls.enabled()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls.cert;
    cfg.openssl_key = tls.key;
    cfg.openssl_cafile = tls.cafile;
  }
}

caf::io::middleman_actor connector(caf::actor_system& sys, bool tls) {
  return tls ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
}

}  // namespace llmx::network
