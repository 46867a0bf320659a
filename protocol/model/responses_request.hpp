// Building Responses API request bodies (engine.md §3.2, §3.4): POST {base_url}/responses for
// providers with `wire_api = "responses"`.
#pragma once

#include <string>

#include "protocol/model/chat_request.hpp"

namespace llmx {

// Whether the provider is Azure OpenAI (engine.md §3.2): it stores responses (`store: true`).
bool is_azure_provider(const ModelProviderInfo& provider);

// The JSON body of POST /responses. The history is normalised as for Chat (every call has one
// output); reasoning items go back only with their encrypted content (the only form a stateless
// request can use), and images as input_image.
std::string build_responses_request(const Prompt& prompt, const ModelProviderInfo& provider);

}  // namespace llmx
