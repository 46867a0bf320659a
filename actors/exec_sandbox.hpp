// The exec sandbox actor of one task (see actors.hpp).
#pragma once

#include "actors/actors.hpp"

namespace llmx {

// Live output goes to `output_sink` (the task's turn executor).
exec_sandbox_actor spawn_exec_sandbox(caf::local_actor* parent, turn_executor_actor output_sink);

}  // namespace llmx
