// Reads one HTTP attempt of a Chat Completions request: status and headers, SSE body bytes,
// end of transfer. Produces ModelEvents as bytes arrive and, at the end, a StreamOutcome that
// says whether the attempt completed or why not. Plain code: it runs on the HTTP loop thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/chat_stream.hpp"
#include "transport/sse_decoder.hpp"

namespace llmx {

class ChatStreamReader {
 public:
  ChatStreamReader(uint32_t attempt, std::string call_id_prefix)
      : parser_(std::move(call_id_prefix)) {
    outcome_.attempt = attempt;
  }

  // Status and headers; a response that carries rate-limit headers (a 2xx or a 429) yields a
  // RateLimits event.
  void on_head(long status, const std::vector<std::pair<std::string, std::string>>& headers,
               std::vector<ModelEvent>& out);
  void on_body(std::string_view bytes, std::vector<ModelEvent>& out);
  // The transfer ended; `transport_error` is empty on a clean end.
  void on_end(const std::string& transport_error, std::vector<ModelEvent>& out);

  // True once the outcome is known (the response may finish before the connection does).
  bool finished() const { return finished_; }
  const StreamOutcome& outcome() const { return outcome_; }

 private:
  void finish(int32_t kind, std::string message);

  sse::Decoder decoder_;
  ChatStreamParser parser_;
  long status_ = 0;
  std::string error_body_;
  bool finished_ = false;
  StreamOutcome outcome_;
};

}  // namespace llmx
