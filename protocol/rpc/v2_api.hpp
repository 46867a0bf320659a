// The app server's v2 API (protocol.md §4): initialize, threads, turns, items and the
// notifications of DECISIONS P9. Plain structs with one field list each; v2 spells approval and
// sandbox enums in camelCase (§4.3), thread items are internally tagged with camelCase tags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/core/events.hpp"
#include "protocol/core/items.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/base/reflect.hpp"
#include "protocol/base/schema_gen.hpp"

namespace llmx::v2 {

struct ClientInfo {
  std::string name;
  std::string version;
  Nullable<std::string> title;
  LLMX_FIELDS(v("name", s.name); v("version", s.version); v("title", s.title))
};

struct InitializeParams {
  ClientInfo clientInfo;
  LLMX_FIELDS(v("clientInfo", s.clientInfo))
};

struct InitializeResult {
  std::string userAgent;
  LLMX_FIELDS(v("userAgent", s.userAgent))
};

// v2 spellings of the approval policy (§4.3).
enum class ApprovalPolicy { unless_trusted, on_failure, on_request, never };
AskForApproval to_core(ApprovalPolicy p);
enum class SandboxModeV2 { read_only, workspace_write, danger_full_access };
SandboxMode to_core(SandboxModeV2 m);

}  // namespace llmx::v2

namespace llmx {
template <>
struct EnumTraits<v2::ApprovalPolicy> {
  static constexpr std::array<std::pair<v2::ApprovalPolicy, std::string_view>, 4> values{{
      {v2::ApprovalPolicy::unless_trusted, "unlessTrusted"},
      {v2::ApprovalPolicy::on_failure, "onFailure"},
      {v2::ApprovalPolicy::on_request, "onRequest"},
      {v2::ApprovalPolicy::never, "never"},
  }};
};
template <>
struct EnumTraits<v2::SandboxModeV2> {
  static constexpr std::array<std::pair<v2::SandboxModeV2, std::string_view>, 3> values{{
      {v2::SandboxModeV2::read_only, "readOnly"},
      {v2::SandboxModeV2::workspace_write, "workspaceWrite"},
      {v2::SandboxModeV2::danger_full_access, "dangerFullAccess"},
  }};
};
}  // namespace llmx

namespace llmx::v2 {

struct Thread {
  std::string id;
  std::string preview;
  std::string modelProvider;
  int64_t createdAt = 0;
  LLMX_FIELDS(v("id", s.id); v("preview", s.preview); v("modelProvider", s.modelProvider);
              v("createdAt", s.createdAt))
};

struct ThreadStartParams {
  Nullable<std::string> model, modelProvider, cwd;
  Nullable<ApprovalPolicy> approvalPolicy;
  Nullable<SandboxModeV2> sandbox;
  Nullable<RawJson> config;
  Nullable<std::string> baseInstructions, developerInstructions;
  LLMX_FIELDS(v("model", s.model); v("modelProvider", s.modelProvider); v("cwd", s.cwd);
              v("approvalPolicy", s.approvalPolicy); v("sandbox", s.sandbox); v("config", s.config);
              v("baseInstructions", s.baseInstructions); v("developerInstructions", s.developerInstructions))
};

struct ThreadResult {
  Thread thread;
  LLMX_FIELDS(v("thread", s.thread))
};

struct ThreadIdParams {
  std::string threadId;
  LLMX_FIELDS(v("threadId", s.threadId))
};

struct ThreadListParams {
  Nullable<std::string> cursor;
  Nullable<int64_t> limit;
  Nullable<std::vector<std::string>> modelProviders;
  LLMX_FIELDS(v("cursor", s.cursor); v("limit", s.limit); v("modelProviders", s.modelProviders))
};

struct ThreadListResult {
  std::vector<Thread> data;
  Nullable<std::string> nextCursor;
  LLMX_FIELDS(v("data", s.data); v("nextCursor", s.nextCursor))
};

// v2 user input: `{"type":"text","text"}`, `{"type":"image","url"}`, `{"type":"localImage","path"}`.
struct UserInputV2 {
  UserInput item;
};
void write_json(json::Writer& w, const UserInputV2& x);
void read_json(json::Element e, UserInputV2& x);

struct TurnError {
  std::string message;
  LLMX_FIELDS(v("message", s.message))
};

// A thread item, written in §4.4's shape (camelCase tag, snake_case keys inside).
struct ThreadItem {
  RawJson json{"{}"};
};

// Schemas of the two hand-encoded types (wire_catalog_v2.cpp).
schema::Node json_schema(const UserInputV2*, schema::Context&);
schema::Node json_schema(const ThreadItem*, schema::Context&);
void write_json(json::Writer& w, const ThreadItem& x);
void read_json(json::Element e, ThreadItem& x);

// A resumed thread's preview: the §9.5 preview of the first user_message among its recorded
// events (session_configured.initial_messages), "" when none.
std::string preview_from_initial_messages(const std::optional<JsonOf<RecordedEvents>>& initial_messages);

// The user message item of a turn.
ThreadItem user_message_item(const std::string& id, const std::vector<UserInput>& content);

enum class TurnStatus { completed, interrupted, failed, in_progress };
}  // namespace llmx::v2
namespace llmx {
template <>
struct EnumTraits<v2::TurnStatus> {
  static constexpr std::array<std::pair<v2::TurnStatus, std::string_view>, 4> values{{
      {v2::TurnStatus::completed, "completed"},
      {v2::TurnStatus::interrupted, "interrupted"},
      {v2::TurnStatus::failed, "failed"},
      {v2::TurnStatus::in_progress, "inProgress"},
  }};
};
}  // namespace llmx
namespace llmx::v2 {

struct Turn {
  std::string id;
  std::vector<ThreadItem> items;
  TurnStatus status = TurnStatus::in_progress;
  Nullable<TurnError> error;
  LLMX_FIELDS(v("id", s.id); v("items", s.items); v("status", s.status); v("error", s.error))
};

struct TurnResult {
  Turn turn;
  LLMX_FIELDS(v("turn", s.turn))
};

struct TurnStartParams {
  std::string threadId;
  std::vector<UserInputV2> input;
  Nullable<std::string> cwd;
  Nullable<ApprovalPolicy> approvalPolicy;
  Nullable<SandboxPolicy> sandboxPolicy;
  Nullable<std::string> model, effort, summary;
  LLMX_FIELDS(v("threadId", s.threadId); v("input", s.input); v("cwd", s.cwd);
              v("approvalPolicy", s.approvalPolicy); v("sandboxPolicy", s.sandboxPolicy);
              v("model", s.model); v("effort", s.effort); v("summary", s.summary))
};

struct TurnInterruptParams {
  std::string threadId;
  std::string turnId;
  LLMX_FIELDS(v("threadId", s.threadId); v("turnId", s.turnId))
};

struct Usage {
  int64_t inputTokens = 0;
  int64_t cachedInputTokens = 0;
  int64_t outputTokens = 0;
  LLMX_FIELDS(v("inputTokens", s.inputTokens); v("cachedInputTokens", s.cachedInputTokens);
              v("outputTokens", s.outputTokens))
};

struct TurnCompletedNotification {
  Turn turn;
  Usage usage;
  LLMX_FIELDS(v("turn", s.turn); v("usage", s.usage))
};

struct ItemNotification {
  ThreadItem item;
  LLMX_FIELDS(v("item", s.item))
};

struct DeltaNotification {
  std::string itemId;
  std::string delta;
  LLMX_FIELDS(v("itemId", s.itemId); v("delta", s.delta))
};

// item/mcpToolCall/progress: a server's progress message for a running call.
struct ProgressNotification {
  std::string itemId, message;
  LLMX_FIELDS(v("itemId", s.itemId); v("message", s.message))
};

}  // namespace llmx::v2

