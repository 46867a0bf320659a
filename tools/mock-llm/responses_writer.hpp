// Renders a Script on the OpenAI Responses wire: typed SSE events (`event: <type>` plus a JSON
// `data:` line with a sequence_number) from response.created to response.completed, or one
// response object when the request did not ask for streaming. There is no [DONE] line.
#pragma once

#include "tools/mock-llm/http.hpp"
#include "tools/mock-llm/scenarios.hpp"
#include "tools/mock-llm/writer.hpp"

namespace mockllm {

// ctx.id is "resp_mock_<n>" and ctx.serial is n (item ids derive from it).
void write_responses_answer(const Script &script, const ResponseContext &ctx, bool stream,
                            httplib::Response &res);

} // namespace mockllm
