// The model streamer actor: one per model request (see actors.hpp).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// Spawns the streamer of one request, linked to `parent` (the executor): neither outlives the
// other's crash, and a killed streamer cancels its transfer.
model_streamer_actor spawn_model_streamer(caf::local_actor* parent, turn_executor_actor executor,
                                          ModelRequest request);

}  // namespace llmx
