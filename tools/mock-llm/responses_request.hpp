// Parsing of an OpenAI Responses API request (POST /v1/responses) into the same ChatRequest the
// chat wire produces, so plan_response and every scenario work unchanged on both wires.
#pragma once

#include "tools/mock-llm/request.hpp"

#include <optional>
#include <string>

namespace mockllm {

// instructions become a leading system message; input items map to messages: message items
// keep their role, function_call (and other *_call items) become assistant messages, and
// function_call_output (any *_call_output) a "tool" message holding the output, so
// after_tool() sees a tool result last. Reasoning and unknown items are skipped.
// `compact` receives the minified body (for recording) whenever the body is valid JSON.
std::optional<ChatRequest> parse_responses_request(const std::string &body, std::string &compact,
                                                   std::string &error);

} // namespace mockllm
