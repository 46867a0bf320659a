// Reads one HTTP attempt of a model request, on either wire (Chat Completions or Responses):
// status and headers, SSE body bytes, end of transfer. Produces ModelEvents as bytes arrive and,
// at the end, a StreamOutcome that says whether the attempt completed or why not. Plain code:
// it runs on the HTTP loop thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/model/chat_stream.hpp"
#include "protocol/config/provider.hpp"
#include "protocol/model/responses_stream.hpp"
#include "transport/sse_decoder.hpp"

namespace llmx {

class ModelStreamReader {
 public:
  ModelStreamReader(uint32_t attempt, std::string call_id_prefix, WireApi wire = WireApi::chat);

  // Status and headers; a response that carries rate-limit headers (a 2xx or a 429) yields a
  // RateLimits event; Retry-After / retry-after-ms are kept for the outcome.
  void on_head(long status, const std::vector<std::pair<std::string, std::string>>& headers,
               std::vector<ModelEvent>& out);
  void on_body(std::string_view bytes, std::vector<ModelEvent>& out);
  // The transfer ended; `transport_error` is empty on a clean end.
  void on_end(const std::string& transport_error, std::vector<ModelEvent>& out);

  // True once the outcome is known (the response may finish before the connection does).
  bool finished() const { return finished_; }
  const StreamOutcome& outcome() const { return outcome_; }

 private:
  enum class Parsed { more, done, error };
  Parsed feed_event(std::string_view data, std::vector<ModelEvent>& out);
  Parsed end_of_stream(std::vector<ModelEvent>& out);
  void finish_error();
  void finish(int32_t kind, std::string message);

  sse::Decoder decoder_;
  std::variant<ChatStreamParser, ResponsesStreamParser> parser_;
  long status_ = 0;
  std::string error_body_;
  std::string internal_error_;
  bool responses_ = false;  // a parser threw: the attempt is retried as a cut stream
  bool finished_ = false;
  StreamOutcome outcome_;
};

}  // namespace llmx
