// Turns Chat Completions stream chunks into ModelEvents (engine.md §2.5, DECISIONS E1–E5):
// tool calls accumulated by `index` (ids and names may come late, repeated, split or never),
// tool calls honoured whatever the finish reason, usage read until [DONE] or end of stream,
// `reasoning_content` / `reasoning` both understood, an `error` object ends the stream.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json_reader.hpp"
#include "protocol/model_events.hpp"

namespace llmx {

class ChatStreamParser {
 public:
  // `call_id_prefix` makes synthesised call ids unique within a conversation.
  explicit ChatStreamParser(std::string call_id_prefix = "call") : prefix_(std::move(call_id_prefix)) {}

  enum class Status { more, done, error };

  // Handles the data of one SSE event. Appends produced events to `out`.
  Status on_data(std::string_view data, std::vector<ModelEvent>& out);

  // The byte stream ended. Returns done when the response was complete (finish reason seen),
  // error when it was cut off (see error_message()).
  Status on_end(std::vector<ModelEvent>& out);

  const std::string& error_message() const { return error_; }
  bool finished() const { return done_; }
  bool saw_finish_reason() const { return !finish_reason_.empty(); }

 private:
  struct PendingCall {
    std::string id, name, arguments;
  };
  void handle_chunk(json::Object chunk, std::vector<ModelEvent>& out);
  void handle_tool_call(json::Object call, size_t position);
  void flush_items(std::vector<ModelEvent>& out);
  void complete(std::vector<ModelEvent>& out);

  std::string prefix_;
  json::Parser parser_;
  std::string text_;
  std::string reasoning_;
  std::map<int64_t, PendingCall> calls_;
  std::optional<TokenUsage> usage_;
  std::string finish_reason_;
  bool items_flushed_ = false;
  bool done_ = false;
  std::string error_;
};

}  // namespace llmx
