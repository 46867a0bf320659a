// The initial context recorded at the start of every conversation (engine.md §1.3): developer
// instructions, AGENTS.md instructions and the <environment_context> block.
#pragma once

#include <vector>

#include "protocol/model/chat_request.hpp"
#include "protocol/config/config.hpp"
#include "protocol/core/items.hpp"
#include "protocol/model/provider_models.hpp"

namespace llmx {

// The <environment_context> XML for these settings.
std::string environment_context_xml(const Config& cfg);

// The items every new conversation starts with.
std::vector<ResponseItem> initial_context(const Config& cfg);

// The system prompt: the configured base instructions, else our own (protocol/prompts/system.md).
std::string system_instructions(const Config& cfg);

// A request's settings for this configuration: model, system prompt, and what the model supports
// (parallel tool calls by family; reasoning, output limit and cache markers as `spec` says, its
// provider's metadata or the built-in table). Input and tools are left to the caller.
Prompt base_prompt(const Config& cfg, const std::string& conversation_id, const models::ModelSpec& spec);

}  // namespace llmx
