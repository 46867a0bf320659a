// What the chat and Responses writers share: the per-response context, the renderer interface
// that turns Script events into SSE frames, and the loops that put a Script on the wire (the
// streaming one owns timing, cuts, hangs and byte-wise writes, so renderers stay pure).
#pragma once

#include "tools/mock-llm/http.hpp"
#include "tools/mock-llm/scenarios.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mockllm {

// How a chat stream is shaped. Default is the original mock output that the integration tests
// pin; the others imitate providers (see dialects.cpp).
enum class Dialect { Default, OpenAI, Anthropic, Gemini, DeepSeek, VLLM, Azure };

struct ResponseContext {
  std::string id; // "chatcmpl-mock-<n>" or "resp_mock_<n>"
  long long created = 0;
  std::string model;
  bool include_usage = false;
  size_t prompt_tokens = 0;
  long long global_delay_ms = 0; // --delay-ms, applied between written events
  Dialect dialect = Dialect::Default;
  unsigned long long serial = 0; // the request's number, for ids derived from it
};

using Frames = std::vector<std::string>;

// Turns the chunk-like events of a Script into complete SSE frames. The stream loop handles
// Sleep, Cut, Hang, End and Raw itself and never passes them in.
class FrameRenderer {
public:
  virtual ~FrameRenderer() = default;
  virtual void render(const Event &e, Frames &out) = 0;
  // Frames after the last event of a stream that ran to its end (e.g. "data: [DONE]").
  virtual void finish(Frames &out) = 0;
};

// Appends the event's text as a JSON string, unchecked when the event asks for raw bytes.
void append_event_text(std::string &out, const Event &e);

// Sleeps up to `total`, waking every 100 ms to notice a client that went away (false then).
bool wait_while_connected(httplib::DataSink &sink, std::chrono::steady_clock::duration total);

// Streams the script as text/event-stream through `renderer` on the connection's thread.
void write_stream(std::shared_ptr<const Script> script, std::shared_ptr<FrameRenderer> renderer,
                  long long global_delay_ms, httplib::Response &res);

// The non-streaming answer: waits as long as the stream would have taken, then sends
// `body()` as JSON, the script's HTTP error, or (cut/hang) a truncated body.
void write_json_answer(const Script &script, long long global_delay_ms,
                       const std::function<std::string()> &body, httplib::Response &res);

} // namespace mockllm
