// A session's writer when its client is a message socket (the app-server over WebSocket): each
// JSON line the session writes becomes one message, handed to `send` (the listener's thread-safe
// queue), so the session code is the same as on stdio.
#pragma once

#include <functional>
#include <string>

#include "actors/actors.hpp"

namespace llmx {

// `closed` runs once the session has told the writer to stop (its last line is out): the
// connection can close, the session is gone.
line_writer_actor spawn_message_writer(caf::actor_system& sys, std::function<void(std::string)> send,
                                       std::function<void()> closed = {});

}  // namespace llmx
