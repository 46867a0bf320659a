// The app server's v2 API (protocol.md §4): initialize, threads, turns, items and the
// notifications of DECISIONS P9. Plain structs with one field list each; v2 spells approval and
// sandbox enums in camelCase (§4.3), thread items are internally tagged with camelCase tags.
#pragma once

#include <map>
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
ApprovalPolicy from_core(AskForApproval p);
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

// `{"type":"notLoaded"}`, `{"type":"idle"}` or `{"type":"active","activeFlags":[]}`.
struct ThreadStatus {
  std::string type = "notLoaded";
  std::optional<std::vector<std::string>> activeFlags;
  LLMX_FIELDS(v("type", s.type); v("activeFlags", s.activeFlags))
};

struct GitInfo {
  Nullable<std::string> sha, branch, originUrl;
  LLMX_FIELDS(v("sha", s.sha); v("branch", s.branch); v("originUrl", s.originUrl))
};

// A thread as v2 shows it. `turns` is filled by thread/fork, thread/read with includeTurns and
// thread/rollback, and empty elsewhere; `name` is the title thread/name/set gave it.
struct Thread {
  std::string id;
  std::string preview;
  std::string modelProvider;
  int64_t createdAt = 0;
  int64_t updatedAt = 0;
  ThreadStatus status;
  Nullable<std::string> path;
  std::string cwd;
  std::string cliVersion;
  RawJson source{"\"unknown\""};  // "cli", "vscode", "exec", "appServer", … or an object
  Nullable<GitInfo> gitInfo;
  Nullable<std::string> name;
  std::vector<Turn> turns;
  LLMX_FIELDS(v("id", s.id); v("preview", s.preview); v("modelProvider", s.modelProvider);
              v("createdAt", s.createdAt); v("updatedAt", s.updatedAt); v("status", s.status);
              v("path", s.path); v("cwd", s.cwd); v("cliVersion", s.cliVersion); v("source", s.source);
              v("gitInfo", s.gitInfo); v("name", s.name); v("turns", s.turns))
};

// thread/read, thread/unarchive, thread/rollback; also the params of thread/started.
struct ThreadResult {
  Thread thread;
  LLMX_FIELDS(v("thread", s.thread))
};

// thread/start, thread/resume, thread/fork: the thread and the settings it runs with.
struct ThreadOpenedResult {
  Thread thread;
  std::string model;
  std::string modelProvider;
  std::string cwd;
  ApprovalPolicy approvalPolicy = ApprovalPolicy::on_request;
  SandboxPolicy sandbox;
  Nullable<std::string> reasoningEffort;
  LLMX_FIELDS(v("thread", s.thread); v("model", s.model); v("modelProvider", s.modelProvider); v("cwd", s.cwd);
              v("approvalPolicy", s.approvalPolicy); v("sandbox", s.sandbox);
              v("reasoningEffort", s.reasoningEffort))
};

struct ThreadListResult {
  std::vector<Thread> data;
  Nullable<std::string> nextCursor;
  LLMX_FIELDS(v("data", s.data); v("nextCursor", s.nextCursor))
};

// thread/fork: which thread (or rollout path) to copy, and thread/start's settings for the copy.
struct ThreadForkParams : ThreadStartParams {
  std::string threadId;
  Nullable<std::string> path;
  LLMX_FIELDS(v("threadId", s.threadId); v("path", s.path); ThreadStartParams::fields(s, v))
};

struct ThreadReadParams {
  std::string threadId;
  bool includeTurns = false;
  LLMX_FIELDS(v("threadId", s.threadId); v("includeTurns", s.includeTurns, Field::defaulted))
};

struct ThreadRollbackParams {
  std::string threadId;
  int64_t numTurns = 0;
  LLMX_FIELDS(v("threadId", s.threadId); v("numTurns", s.numTurns))
};

struct ThreadSetNameParams {
  std::string threadId;
  std::string name;
  LLMX_FIELDS(v("threadId", s.threadId); v("name", s.name))
};

struct ThreadLoadedListParams {
  Nullable<std::string> cursor;
  Nullable<int64_t> limit;
  LLMX_FIELDS(v("cursor", s.cursor); v("limit", s.limit))
};

struct ThreadLoadedListResult {
  std::vector<std::string> data;
  Nullable<std::string> nextCursor;
  LLMX_FIELDS(v("data", s.data); v("nextCursor", s.nextCursor))
};

struct TurnSteerParams {
  std::string threadId;
  std::vector<UserInputV2> input;
  std::string expectedTurnId;
  LLMX_FIELDS(v("threadId", s.threadId); v("input", s.input); v("expectedTurnId", s.expectedTurnId))
};

struct TurnSteerResult {
  std::string turnId;
  LLMX_FIELDS(v("turnId", s.turnId))
};

// command/exec: a one-off command under the sandbox. With a `processId` (chosen by the client) it
// can be terminated, and with streamStdoutStderr its output streams as command/exec/outputDelta
// (and is then not repeated in the result). A timeout ends it with exit code 124.
struct CommandExecParams {
  std::vector<std::string> command;
  Nullable<int64_t> timeoutMs;
  Nullable<std::string> cwd;
  Nullable<SandboxPolicy> sandboxPolicy;
  Nullable<std::string> processId;
  bool streamStdoutStderr = false;
  Nullable<int64_t> outputBytesCap;
  bool disableOutputCap = false;
  bool disableTimeout = false;
  Nullable<std::map<std::string, Nullable<std::string>>> env;  // null unsets a variable
  LLMX_FIELDS(v("command", s.command); v("timeoutMs", s.timeoutMs); v("cwd", s.cwd);
              v("sandboxPolicy", s.sandboxPolicy); v("processId", s.processId);
              v("streamStdoutStderr", s.streamStdoutStderr, Field::defaulted);
              v("outputBytesCap", s.outputBytesCap); v("disableOutputCap", s.disableOutputCap, Field::defaulted);
              v("disableTimeout", s.disableTimeout, Field::defaulted); v("env", s.env))
};

struct CommandExecResult {
  int64_t exitCode = 0;
  std::string out, err;
  LLMX_FIELDS(v("exitCode", s.exitCode); v("stdout", s.out); v("stderr", s.err))
};

struct CommandExecOutputDelta {
  std::string processId;
  std::string stream;  // "stdout" | "stderr"
  std::string deltaBase64;
  bool capReached = false;
  LLMX_FIELDS(v("processId", s.processId); v("stream", s.stream); v("deltaBase64", s.deltaBase64);
              v("capReached", s.capReached))
};

struct CommandExecTerminateParams {
  std::string processId;
  LLMX_FIELDS(v("processId", s.processId))
};

// thread/archived, thread/unarchived.
struct ThreadIdNotification {
  std::string threadId;
  LLMX_FIELDS(v("threadId", s.threadId))
};

struct ThreadNameUpdatedNotification {
  std::string threadId;
  std::optional<std::string> threadName;
  LLMX_FIELDS(v("threadId", s.threadId); v("threadName", s.threadName))
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

// Written in place from the event it derives from (one per streamed delta), never read.
struct DeltaNotification {
  std::string_view itemId;
  std::string_view delta;
  LLMX_FIELDS(v("itemId", s.itemId); v("delta", s.delta))
};

// item/mcpToolCall/progress: a server's progress message for a running call.
struct ProgressNotification {
  std::string itemId, message;
  LLMX_FIELDS(v("itemId", s.itemId); v("message", s.message))
};

}  // namespace llmx::v2

