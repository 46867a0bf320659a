// CAF's middleman and its OpenSSL module, for processes that talk to other nodes. Only this
// layer links libcaf_io and libcaf_openssl (with libssl and libcrypto): programs that embed the
// engine link it (llmx::llmx_network); the llmx binary instead loads it as a module the first
// time it needs a node (module/loader.cpp), so a server that never does starts without them.
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman_actor.hpp>

namespace llmx::network {

// PEM files for TLS between nodes: all three, or none (plain TCP, loopback only).
struct Tls {
  std::string cert, key, cafile;
  bool enabled() const { return !cert.empty(); }
};

// Loads the middleman (and, with TLS, the OpenSSL module) into `cfg`; only peers of the
// application `llmx` complete the handshake, and a vanished host is noticed by its missing
// heartbeats. Before the actor system is created.
void configure(caf::actor_system_config& cfg, const Tls& tls);

// The actor that connects to remote nodes and publishes local ones (publish_atom), over TLS
// when `tls`.
caf::io::middleman_actor connector(caf::actor_system& sys, bool tls);

}  // namespace llmx::network
