// The model registry (see actors.hpp for its interface): fetches and caches what each provider
// serves; the reading and deciding is plain code in protocol/model/provider_models.*.
#pragma once

#include "actors/actors.hpp"

namespace llmx {

model_registry_actor spawn_model_registry(caf::actor_system& sys);

}  // namespace llmx
