// Renders a Script as an OpenAI-compatible Chat Completions response: an SSE stream of
// chat.completion.chunk objects, or a single chat.completion object when the request did not ask
// for streaming. The Default dialect is rendered here; the provider dialects in dialects.cpp.
#pragma once

#include "tools/mock-llm/http.hpp"
#include "tools/mock-llm/scenarios.hpp"
#include "tools/mock-llm/writer.hpp"

#include <string>

namespace mockllm {

// Fills `res` for a successful (HTTP 200) plan. Streaming responses are produced lazily by a
// chunked content provider running on the connection's thread.
void write_response(const Script &script, const ResponseContext &ctx, bool stream,
                    httplib::Response &res);

// The chunk JSON for one event (without the "data: " framing); empty for events that are not
// chunks (Raw, Sleep, Cut, Hang). Exposed for reuse by the non-streaming path and for testing.
std::string render_chunk(const ResponseContext &ctx, const Event &e);

std::string usage_json(size_t prompt_tokens, size_t completion_tokens);

} // namespace mockllm
