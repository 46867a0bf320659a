// How an actor says no to a request, as a CAF error of llmx's own category: the request was wrong
// (a bad id, an unknown thread, an invalid cursor) or we failed (the disk...). A session turns it
// into the client's RpcError in one place (session_state.hpp: rpc_error_of).
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <string>

namespace llmx {

enum class Refusal : uint8_t {
  request = 1,   // the request is wrong: the client can fix it
  internal = 2,  // we failed to carry it out
};

caf::error refuse(Refusal why, std::string message);

// The error's message (its text, not CAF's rendering), and whether it blames the request.
std::string error_text(const caf::error& err);
bool is_request_error(const caf::error& err);

// Renders llmx's error category in logs and CAF's own messages (add_message_types registers it).
void add_refusal_category(caf::actor_system_config& cfg);

}  // namespace llmx
