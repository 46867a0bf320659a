// Turns Chat Completions stream chunks into ModelEvents (engine.md §2.5, DECISIONS E1–E5), for
// every dialect LiteLLM and the providers behind it speak:
//   * tool calls accumulated by `index`; ids and names may come late, repeated, cumulative,
//     split or never (a stable id is synthesised); a chunk that starts a different call on an
//     index already in use (another id, or a new name after complete arguments: Gemini sends
//     every call whole at index 0) opens a new call;
//   * tool calls are honoured whatever the finish reason; usage is read until [DONE] or the end
//     of the stream (a usage-only chunk may come after the finish chunk);
//   * `reasoning_content` / `reasoning` both read; Anthropic `thinking_blocks` (with their
//     signatures) are kept in the reasoning item's `encrypted_content` as a JSON array so they
//     can be passed back (chat_request.hpp);
//   * an `error` object ends the stream: retryable when it says rate limit, overload or server
//     error (429/5xx), fatal otherwise;
//   * a chunk with invalid UTF-8 is repaired (U+FFFD), not dropped;
//   * once a chunk's shape around its text is proven, chunks of that shape are read without a
//     parse (chunk_shape.hpp); what they yield is exactly what the parse would.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "protocol/core/model_events.hpp"
#include "protocol/model/chunk_shape.hpp"

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
  // After Status::error from on_data: whether the provider's error is worth retrying.
  bool error_retryable() const { return error_retryable_; }
  bool finished() const { return done_; }
  bool saw_finish_reason() const { return !finish_reason_.empty(); }
  // Off: every chunk is parsed whole (the fuzz target compares both ways).
  void reuse_shapes(bool on) { shape_trials_ = on ? kShapeTrials : 0; }
  // How many chunks were read by their shape, without a parse.
  size_t shape_reads() const { return shape_reads_; }

 private:
  struct PendingCall {
    int64_t index = 0;
    std::string id, name, arguments;
  };
  struct ThinkingBlock {
    std::string type = "thinking";
    std::string thinking, signature, data;  // data: redacted_thinking
  };
  void handle_chunk(json::Object chunk, std::vector<ModelEvent>& out);
  void handle_delta(json::Object delta, std::vector<ModelEvent>& out);
  void handle_tool_call(json::Object call, size_t position);
  void handle_thinking_block(json::Object block, bool reasoning_seen, std::vector<ModelEvent>& out);
  void handle_error(json::Element err);
  void flush_items(std::vector<ModelEvent>& out);
  void complete(std::vector<ModelEvent>& out);
  void learn_shape(std::string_view chunk, const ModelEvent& produced);
  bool proves_shape(bool reasoning) const;

  std::string prefix_;
  json::Parser parser_;
  std::string text_;
  std::string reasoning_;
  std::vector<ThinkingBlock> thinking_;
  std::vector<PendingCall> calls_;     // in the order they were opened
  std::map<int64_t, size_t> slot_of_;  // stream index -> the call currently open there
  std::optional<TokenUsage> usage_;
  std::string finish_reason_;
  bool items_flushed_ = false;
  bool done_ = false;
  std::string error_;
  bool error_retryable_ = false;
  // A chunk that matches the proven shape is one more piece of text (or reasoning). A stream
  // whose chunks keep changing shape stops trying after a few proofs: each costs three parses.
  static constexpr int kShapeTrials = 8;
  ChunkShape shape_;
  bool shape_reasoning_ = false;
  int shape_trials_ = kShapeTrials;
  size_t shape_reads_ = 0;
};

}  // namespace llmx
