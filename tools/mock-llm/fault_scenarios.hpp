// Fault-injection scenarios: HTTP answers and stream shapes that a robust client must survive
// (odd statuses, bodies split at every byte, huge or invalid events, streams that never end).
#pragma once

#include "tools/mock-llm/scenarios.hpp"

namespace mockllm {

Script sc_headers_only(const ChatRequest &, const Directive &);
Script sc_close_each(const ChatRequest &, const Directive &);
Script sc_huge(const ChatRequest &, const Directive &);
Script sc_bytewise(const ChatRequest &, const Directive &);
Script sc_non_utf8(const ChatRequest &, const Directive &);
Script sc_empty(const ChatRequest &, const Directive &);
Script sc_no_finish(const ChatRequest &, const Directive &);
Script sc_length(const ChatRequest &, const Directive &);
Script sc_content_filter(const ChatRequest &, const Directive &);

// Plans `status`, `error_chunk` and `context_length`, whose answer depends on times= or on the
// wire. Returns false (leaving `plan` alone) for every other scenario.
bool plan_fault(const ChatRequest &req, const Directive &d, const TimesCounter &times,
                Plan &plan);

} // namespace mockllm
