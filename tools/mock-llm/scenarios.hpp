// Scripted model behaviours. A scenario turns a parsed request into either an HTTP error or a
// Script: the ordered list of stream events that the SSE writer renders (or that is folded into
// one non-streaming chat.completion object).
#pragma once

#include "tools/mock-llm/request.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mockllm {

enum class EventKind {
  Role,      // first chunk: delta {"role":"assistant"}
  Content,   // delta {"content": text}
  Reasoning, // delta {"reasoning_content": text}
  ToolStart, // delta {"tool_calls":[{index,id,type,function:{name,arguments:""}}]}
  ToolArgs,  // delta {"tool_calls":[{index,function:{arguments: text}}]}
  Finish,    // delta {} with finish_reason = text
  Raw,       // verbatim SSE bytes (garbage events, error events)
  NoChoices, // a well-formed chunk whose "choices" is empty (clients must skip it)
  Sleep,     // pause `ms` before the next event
  Cut,       // drop the connection mid-stream
  Hang,      // keep the connection open without writing
  // An error inside a 200 stream. Chat wire: `data: <text>` verbatim. Responses wire: a
  // response.failed (`response_failed`) or an `error` event carrying `code` and `message`.
  StreamError,
  End, // end the body cleanly but without [DONE], then close the connection
};

struct Event {
  Event(EventKind k, std::string t = {}) : kind(k), text(std::move(t)) {}

  EventKind kind;
  std::string text;
  int index = 0;
  std::string id, name;
  long long ms = 0;
  std::string code, message; // StreamError on the Responses wire
  bool response_failed = false;
  bool raw_utf8 = false; // send `text` byte for byte, even invalid UTF-8 (non_utf8 scenario)
};

struct Script {
  std::vector<Event> events;
  // Non-streaming equivalent of a stream that fails after starting (stream_error).
  int non_stream_status = 200;
  std::string non_stream_error_body;
  // Write the SSE bytes one per write call, so every byte arrives in its own TCP segment.
  bool bytewise = false;

  Script &role() { return add(Event(EventKind::Role)); }
  Script &content(std::string t) { return add(Event(EventKind::Content, std::move(t))); }
  Script &reasoning(std::string t) { return add(Event(EventKind::Reasoning, std::move(t))); }
  Script &tool_start(int index, std::string id, std::string name);
  Script &tool_args(int index, std::string part);
  Script &finish(std::string reason) { return add(Event(EventKind::Finish, std::move(reason))); }
  Script &raw(std::string bytes) { return add(Event(EventKind::Raw, std::move(bytes))); }
  Script &sleep(long long ms);
  Script &cut() { return add(Event(EventKind::Cut)); }
  Script &hang() { return add(Event(EventKind::Hang)); }
  Script &end() { return add(Event(EventKind::End)); }
  Script &stream_error(std::string chat_json, std::string code, std::string message,
                       bool response_failed);
  Script &add(Event e) {
    events.push_back(std::move(e));
    return *this;
  }

  // True when the stream ends normally (so `data: [DONE]` follows the last event).
  bool completes() const;
  size_t content_deltas() const;
};

struct HttpError {
  int status = 500;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // MIME type of `body`; empty means the answer has no body at all (`status body=none`).
  std::string content_type = "application/json";
};

// Counts the requests seen per directive string for `times=N`; returns the count BEFORE this
// request (0 for the first), so the caller fails while the result is < N.
using TimesCounter = std::function<long long(const std::string &directive_raw)>;

struct Plan {
  bool is_error = false;
  HttpError error;
  Script script;
  // `prompt_tokens=N` on any scenario: the usage reports N prompt tokens (for the first
  // `prompt_tokens_times=K` requests carrying the directive, or always).
  std::optional<long long> prompt_tokens;
  // Extra response headers of a successful answer (`ratelimit=...` on any scenario).
  std::vector<std::pair<std::string, std::string>> headers;
  // `dialect=NAME` of the directive (validated), empty when absent.
  std::string dialect;
};

// Rate-limit headers in a provider's family: `openai` (x-ratelimit-*, also what LiteLLM sends),
// `anthropic` (anthropic-ratelimit-*, RFC 3339 resets), `litellm-anthropic` (the same behind
// LiteLLM's `llm_provider-` prefix) or `llmx` (x-llmx-primary-*). `remaining` of a limit of 100
// requests and 10000 tokens. Empty for an unknown family.
std::vector<std::pair<std::string, std::string>> rate_limit_headers(const std::string &family,
                                                                    long long remaining);

bool is_known_scenario(const std::string &name);
const std::vector<std::string> &scenario_names();

// Decides what to answer. `default_scenario` applies when no user message has a directive.
Plan plan_response(const ChatRequest &req, const std::string &default_scenario,
                   const TimesCounter &times_counter);

// The plain streamed answer of `text` (also what times=-limited faults answer afterwards).
Script text_script(const Directive &d, long long default_deltas);

// `times=N` handling: true while this directive has been seen fewer than N times. Without
// `times` the failure is permanent.
bool should_fail(const Directive &d, const TimesCounter &counter);

// OpenAI-style error body: {"error":{"message":..,"type":..[,"code":..]}}.
std::string error_body(std::string_view message, std::string_view type,
                       std::string_view code = {});

} // namespace mockllm
