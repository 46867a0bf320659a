// Building Chat Completions request bodies (engine.md §2.3, DECISIONS E3–E6).
#pragma once

#include <list>
#include <string>
#include <vector>

#include "protocol/base/thread_kept.hpp"
#include "protocol/core/history.hpp"
#include "protocol/core/items.hpp"
#include "protocol/config/provider.hpp"

namespace llmx {

// A function tool offered to the model.
struct ToolSpec {
  std::string name;
  std::string description;
  RawJson parameters;  // JSON Schema of the arguments
  LLMX_FIELDS(v("name", s.name); v("description", s.description); v("parameters", s.parameters))
};

// Everything one model request needs, independent of the wire.
struct Prompt {
  std::string model;
  std::string instructions;         // system prompt
  History input;  // oldest first; shared with the task that sent it, never copied
  std::vector<ToolSpec> tools;
  bool parallel_tool_calls = false;
  // Used by the Responses wire only (engine.md §3.2): the conversation (prompt_cache_key and the
  // conversation_id / session_id headers), and the reasoning and verbosity settings, sent when
  // the model family supports them.
  std::string conversation_id;
  bool reasoning = false;  // the family supports reasoning summaries: send `reasoning`
  std::optional<std::string> reasoning_effort;
  std::string reasoning_summary = "auto";
  std::optional<std::string> verbosity;  // only for families that support it
  // The final answer must be JSON of this schema (`llmx exec --output-schema`): Chat's
  // response_format, Responses' text.format.
  std::optional<RawJson> output_schema;
  // Responses only: the access program requested for the model (`access_programs.cyber`).
  std::optional<std::string> cyber_access_program;
  // What the model's metadata decided (issue 19); unset: the provider's settings and E6's name
  // rule alone. The model's own output limit (Chat's `max_tokens` and Responses'
  // `max_output_tokens` never exceed it), whether to send cache_control markers, and the effort
  // sent as Chat's `reasoning_effort` (only to a model the provider says reasons).
  std::optional<int64_t> output_cap;
  std::optional<bool> cache_markers;
  std::optional<std::string> chat_reasoning_effort;
  // The model an alias stands for (LiteLLM's litellm_params.model): what reasoning goes back as.
  std::optional<std::string> upstream;
  LLMX_FIELDS(v("model", s.model); v("instructions", s.instructions); v("input", s.input);
              v("tools", s.tools); v("parallel_tool_calls", s.parallel_tool_calls);
              v("conversation_id", s.conversation_id); v("reasoning", s.reasoning);
              v("reasoning_effort", s.reasoning_effort); v("reasoning_summary", s.reasoning_summary);
              v("verbosity", s.verbosity); v("output_schema", s.output_schema);
              v("cyber_access_program", s.cyber_access_program);
              v("output_cap", s.output_cap); v("cache_markers", s.cache_markers);
              v("chat_reasoning_effort", s.chat_reasoning_effort); v("upstream", s.upstream))
};

// A history made valid for strict providers, built for each request without copying it: the
// items it keeps are the caller's (which must outlive it), the few it makes are its own.
class NormalizedHistory {
 public:
  size_t size() const { return items_.items.size(); }
  const ResponseItem& operator[](size_t i) const { return *items_.items[i]; }
  // The items in order.
  const std::vector<const ResponseItem*>& items() const { return items_.items; }

 private:
  friend NormalizedHistory normalize_history(const History& items);
  // A request's worth of pointers (8-16 KB for a long history), kept by the thread for the next.
  struct PointersTag {};
  KeptVector<PointersTag, const ResponseItem*, 4096> items_;
  std::list<ResponseItem> made_;  // a list: what points into it stays valid as it grows
};

// Every tool call gets exactly one output (a synthetic "aborted" one right after it when
// missing), outputs without a call are dropped, and calls whose arguments are not valid JSON are
// sent with `{}` (their output keeps the error).
NormalizedHistory normalize_history(const History& items);
// It points into the history, so a temporary one will not do.
NormalizedHistory normalize_history(const History&& items) = delete;

// Anthropic-family models get cache_control markers (E6): model name contains "claude", unless
// the provider's `prompt_cache` says otherwise.
bool wants_prompt_cache(const std::string& model, const ModelProviderInfo& provider);

// The JSON body of POST /chat/completions.
std::string build_chat_request(const Prompt& prompt, const ModelProviderInfo& provider);

}  // namespace llmx
