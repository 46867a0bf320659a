// The core event model (protocol.md §5.2–5.4): what a conversation emits. `Event` crosses actor
// boundaries as is and becomes `llmx/event` / `llmx/event/<type>` notifications and rollout lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "protocol/core/items.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"

namespace llmx {

// --- supporting types ---------------------------------------------------------------------------

struct Duration {
  uint64_t secs = 0;
  uint32_t nanos = 0;
  LLMX_FIELDS(v("secs", s.secs); v("nanos", s.nanos))
  static Duration from_nanos(uint64_t ns) { return {ns / 1000000000ull, uint32_t(ns % 1000000000ull)}; }
};

struct TokenUsage {
  int64_t input_tokens = 0;
  int64_t cached_input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_output_tokens = 0;
  int64_t total_tokens = 0;
  LLMX_FIELDS(v("input_tokens", s.input_tokens); v("cached_input_tokens", s.cached_input_tokens);
              v("output_tokens", s.output_tokens);
              v("reasoning_output_tokens", s.reasoning_output_tokens);
              v("total_tokens", s.total_tokens))
  TokenUsage& operator+=(const TokenUsage& o);
};

struct TokenUsageInfo {
  TokenUsage total_token_usage;
  TokenUsage last_token_usage;
  Nullable<int64_t> model_context_window;
  LLMX_FIELDS(v("total_token_usage", s.total_token_usage); v("last_token_usage", s.last_token_usage);
              v("model_context_window", s.model_context_window))
};

struct RateLimitWindow {
  double used_percent = 0;
  Nullable<int64_t> window_minutes;
  Nullable<int64_t> resets_at;
  LLMX_FIELDS(v("used_percent", s.used_percent); v("window_minutes", s.window_minutes);
              v("resets_at", s.resets_at))
};

struct RateLimitSnapshot {
  Nullable<RateLimitWindow> primary;
  Nullable<RateLimitWindow> secondary;
  LLMX_FIELDS(v("primary", s.primary); v("secondary", s.secondary))
};

struct ParsedRead {
  static constexpr std::string_view kind = "read";
  std::string cmd, name, path;
  LLMX_FIELDS(v("cmd", s.cmd); v("name", s.name); v("path", s.path))
};
struct ParsedListFiles {
  static constexpr std::string_view kind = "list_files";
  std::string cmd;
  Nullable<std::string> path;
  LLMX_FIELDS(v("cmd", s.cmd); v("path", s.path))
};
struct ParsedSearch {
  static constexpr std::string_view kind = "search";
  std::string cmd;
  Nullable<std::string> query, path;
  LLMX_FIELDS(v("cmd", s.cmd); v("query", s.query); v("path", s.path))
};
struct ParsedUnknown {
  static constexpr std::string_view kind = "unknown";
  std::string cmd;
  LLMX_FIELDS(v("cmd", s.cmd))
};
using ParsedCommand = OneOf<ParsedRead, ParsedListFiles, ParsedSearch, ParsedUnknown>;

struct FileAdd {
  static constexpr std::string_view kind = "add";
  std::string content;
  LLMX_FIELDS(v("content", s.content))
};
struct FileDelete {
  static constexpr std::string_view kind = "delete";
  std::string content;
  LLMX_FIELDS(v("content", s.content))
};
struct FileUpdate {
  static constexpr std::string_view kind = "update";
  std::string unified_diff;
  Nullable<std::string> move_path;
  LLMX_FIELDS(v("unified_diff", s.unified_diff); v("move_path", s.move_path))
};
using FileChange = Tagged<FileAdd, FileDelete, FileUpdate>;

enum class StepStatus { pending, in_progress, completed };
template <>
struct EnumTraits<StepStatus> {
  static constexpr std::array<std::pair<StepStatus, std::string_view>, 3> values{{
      {StepStatus::pending, "pending"},
      {StepStatus::in_progress, "in_progress"},
      {StepStatus::completed, "completed"},
  }};
};

struct PlanItem {
  std::string step;
  StepStatus status = StepStatus::pending;
  LLMX_FIELDS(v("step", s.step); v("status", s.status))
};

// Turn items (externally tagged, PascalCase tags).
struct AgentText {
  static constexpr std::string_view kind = "Text";
  std::string text;
  LLMX_FIELDS(v("text", s.text))
};
using AgentContent = Tagged<AgentText>;

struct UserMessageTurnItem {
  static constexpr std::string_view kind = "UserMessage";
  std::string id;
  std::vector<UserInput> content;
  LLMX_FIELDS(v("id", s.id); v("content", s.content))
};
struct AgentMessageTurnItem {
  static constexpr std::string_view kind = "AgentMessage";
  std::string id;
  std::vector<AgentContent> content;
  LLMX_FIELDS(v("id", s.id); v("content", s.content))
};
struct ReasoningTurnItem {
  static constexpr std::string_view kind = "Reasoning";
  std::string id;
  std::vector<std::string> summary_text;
  std::vector<std::string> raw_content;
  LLMX_FIELDS(v("id", s.id); v("summary_text", s.summary_text); v("raw_content", s.raw_content))
};
using TurnItem = Tagged<UserMessageTurnItem, AgentMessageTurnItem, ReasoningTurnItem>;

// Raw bytes that travel as standard base64 in JSON (exec output chunks).
struct Base64Bytes {
  std::string bytes;
  LLMX_FIELDS(v("bytes", s.bytes))
};
void write_json(json::Writer& w, const Base64Bytes& x);
void read_json(json::Element e, Base64Bytes& x);
namespace schema {
struct Node;
class Context;
}  // namespace schema
schema::Node json_schema(const Base64Bytes*, schema::Context& c);  // a string, see schema_gen.hpp

// Where a session was started (protocol.md §3.2): "cli", "vscode", "exec", "mcp", "unknown", or
// {"subagent": "review" | "compact" | {"other": name}}. Stored and passed on as JSON text
// (JsonOf<SessionSource>); this type only gives that text its schema.
struct SessionSource {};
schema::Node json_schema(const SessionSource*, schema::Context& c);

}  // namespace llmx

#include "protocol/core/event_msgs.hpp"
