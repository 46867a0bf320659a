// The value types actors exchange (besides the protocol types in protocol/). All are plain
// structs with one field list, so CAF can serialise them (see protocol/caf_inspect.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/chat_request.hpp"
#include "protocol/config.hpp"
#include "protocol/model_events.hpp"
#include "protocol/ops.hpp"

namespace llmx {

// Events of one conversation, in order, as delivered to subscribers. Batched: one message per
// burst (e.g. everything one network read produced) keeps the per-delta cost low.
struct ConversationEvents {
  std::string conversation_id;
  std::vector<Event> events;
  LLMX_FIELDS(v("conversation_id", s.conversation_id); v("events", s.events))
};

// Everything a turn executor needs to run one task.
struct TaskSpec {
  std::string conversation_id;
  std::string sub_id;
  Config config;
  std::vector<ResponseItem> history;  // the conversation so far (initial context included)
  std::vector<UserInput> input;       // the user input that starts the task
  LLMX_FIELDS(v("conversation_id", s.conversation_id); v("sub_id", s.sub_id); v("config", s.config);
              v("history", s.history); v("input", s.input))
};

// User input that arrives while a task runs; it joins the task's next model request.
struct InjectInput {
  std::vector<UserInput> items;
  LLMX_FIELDS(v("items", s.items))
};

// Items a task adds to the conversation history, in order.
struct RecordItems {
  std::vector<ResponseItem> items;
  LLMX_FIELDS(v("items", s.items))
};

// A task has ended (completed, failed or aborted); its final event was already emitted.
struct TaskDone {
  std::string sub_id;
  bool aborted = false;
  LLMX_FIELDS(v("sub_id", s.sub_id); v("aborted", s.aborted))
};

// One model request of a task.
struct ModelRequest {
  uint64_t seq = 0;  // identifies the request within its task
  Prompt prompt;
  ModelProviderInfo provider;
  std::string call_id_prefix;
  std::string user_agent;
  LLMX_FIELDS(v("seq", s.seq); v("prompt", s.prompt); v("provider", s.provider);
              v("call_id_prefix", s.call_id_prefix); v("user_agent", s.user_agent))
};

// Streamed results of a model request, batched per network read.
struct ModelEvents {
  uint64_t seq = 0;
  std::vector<ModelEvent> events;
  LLMX_FIELDS(v("seq", s.seq); v("events", s.events))
};

// The model request is being retried (shown to clients as `stream_error`).
struct ModelRetrying {
  uint64_t seq = 0;
  std::string message;
  LLMX_FIELDS(v("seq", s.seq); v("message", s.message))
};

// The model request failed for good; `message` is what the `error` event says.
struct ModelFailed {
  uint64_t seq = 0;
  std::string message;
  LLMX_FIELDS(v("seq", s.seq); v("message", s.message))
};

}  // namespace llmx
