// The approval broker actor of one conversation (see actors.hpp).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// `timeout_ms`: how long a request may wait for the client (DECISIONS P3).
approval_broker_actor spawn_approval_broker(caf::local_actor* parent, conversation_actor conversation,
                                            int64_t timeout_ms);

}  // namespace llmx
