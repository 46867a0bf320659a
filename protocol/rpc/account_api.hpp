// Params, results and notifications of the account, auth and utility methods both servers serve
// (protocol.md §3.1-3.3, §4.4-4.6; DECISIONS P1, P2): getUserSavedConfig, getUserAgent,
// userInfo, the v1 auth methods, account/*, feedback/upload, getConversationSummary. Plain structs with one field list each
// (camelCase wire names, `file_name` kept as the reference spells it), plus the plain code behind
// the methods: the saved-config reader and the rate-limit conversion. Nothing here touches actors.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/core/events.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/base/reflect.hpp"
#include "protocol/store/thread_store.hpp"

namespace llmx::api {

// --- small results ---------------------------------------------------------------------------------

struct GetUserAgentResult {
  std::string userAgent;
  LLMX_FIELDS(v("userAgent", s.userAgent))
};

// llmx has no ChatGPT login, so there is never an alleged email.
struct UserInfoResult {
  Nullable<std::string> allegedUserEmail;
  LLMX_FIELDS(v("allegedUserEmail", s.allegedUserEmail))
};

// --- getUserSavedConfig ----------------------------------------------------------------------------

// [sandbox_workspace_write] as written in config.toml.
struct SandboxSettings {
  std::vector<std::string> writableRoots;
  Nullable<bool> networkAccess, excludeTmpdirEnvVar, excludeSlashTmp;
  LLMX_FIELDS(v("writableRoots", s.writableRoots); v("networkAccess", s.networkAccess);
              v("excludeTmpdirEnvVar", s.excludeTmpdirEnvVar); v("excludeSlashTmp", s.excludeSlashTmp))
};

// [tools] as written in config.toml (`web_search`, or its alias `web_search_request`; `view_image`).
struct ToolsSettings {
  Nullable<bool> webSearch, viewImage;
  LLMX_FIELDS(v("webSearch", s.webSearch); v("viewImage", s.viewImage))
};

// One [profiles.<name>] table.
struct ProfileSettings {
  Nullable<std::string> model, modelProvider, approvalPolicy, modelReasoningEffort, modelReasoningSummary,
      modelVerbosity, chatgptBaseUrl;
  LLMX_FIELDS(v("model", s.model); v("modelProvider", s.modelProvider); v("approvalPolicy", s.approvalPolicy);
              v("modelReasoningEffort", s.modelReasoningEffort);
              v("modelReasoningSummary", s.modelReasoningSummary); v("modelVerbosity", s.modelVerbosity);
              v("chatgptBaseUrl", s.chatgptBaseUrl))
};

// What config.toml itself says (not the resolved configuration): every key present, null when
// the file does not set it; `profiles` is `{}` when there are none.
struct UserSavedConfig {
  Nullable<std::string> approvalPolicy, sandboxMode;
  Nullable<SandboxSettings> sandboxSettings;
  Nullable<std::string> forcedChatgptWorkspaceId, forcedLoginMethod, model, modelReasoningEffort,
      modelReasoningSummary, modelVerbosity;
  Nullable<ToolsSettings> tools;
  Nullable<std::string> profile;
  std::map<std::string, ProfileSettings> profiles;
  LLMX_FIELDS(v("approvalPolicy", s.approvalPolicy); v("sandboxMode", s.sandboxMode);
              v("sandboxSettings", s.sandboxSettings); v("forcedChatgptWorkspaceId", s.forcedChatgptWorkspaceId);
              v("forcedLoginMethod", s.forcedLoginMethod); v("model", s.model);
              v("modelReasoningEffort", s.modelReasoningEffort);
              v("modelReasoningSummary", s.modelReasoningSummary); v("modelVerbosity", s.modelVerbosity);
              v("tools", s.tools); v("profile", s.profile); v("profiles", s.profiles))
};

struct GetUserSavedConfigResult {
  UserSavedConfig config;
  LLMX_FIELDS(v("config", s.config))
};

// Why config.toml could not be turned into a UserSavedConfig: `unreadable` (the file exists but
// cannot be read) or not (bad TOML, a value of the wrong type or an unknown enum spelling; the
// message names `file:line:col` and the key).
struct SavedConfigError : std::runtime_error {
  SavedConfigError(bool unreadable, const std::string& message) : std::runtime_error(message), unreadable(unreadable) {}
  bool unreadable;
};

// From the text of a config.toml; `file` labels positions in messages. Throws SavedConfigError.
UserSavedConfig user_saved_config_from_toml(std::string_view text, const std::string& file);
// `<home>/config.toml`; a missing file gives every key null. Throws SavedConfigError.
UserSavedConfig load_user_saved_config(const std::string& home);

// --- v1 auth ----------------------------------------------------------------------------------------

struct LoginApiKeyParams {
  std::string apiKey;
  LLMX_FIELDS(v("apiKey", s.apiKey))
};

struct GetAuthStatusParams {
  Nullable<bool> includeToken, refreshToken;
  LLMX_FIELDS(v("includeToken", s.includeToken); v("refreshToken", s.refreshToken))
};

struct GetAuthStatusResult {
  Nullable<std::string> authMethod;  // "apikey" | null
  Nullable<std::string> authToken;
  bool requiresOpenaiAuth = false;
  LLMX_FIELDS(v("authMethod", s.authMethod); v("authToken", s.authToken); v("requiresOpenaiAuth", s.requiresOpenaiAuth))
};

// The reference types this id as a UUID: anything else is a params error.
struct CancelLoginChatGptParams {
  std::string loginId;
  LLMX_FIELDS(v("loginId", s.loginId))
};

// `authStatusChange`.
struct AuthStatusChangeNotification {
  Nullable<std::string> authMethod;
  LLMX_FIELDS(v("authMethod", s.authMethod))
};

// `loginChatGptComplete`: part of the protocol, never sent by llmx (no ChatGPT login to finish).
struct LoginChatGptCompleteNotification {
  std::string loginId;
  bool success = false;
  Nullable<std::string> error;
  LLMX_FIELDS(v("loginId", s.loginId); v("success", s.success); v("error", s.error))
};

// --- v2 account -------------------------------------------------------------------------------------

struct AccountReadParams {
  Nullable<bool> refreshToken;
  LLMX_FIELDS(v("refreshToken", s.refreshToken))
};

// `{"type":"apiKey"}` (the only kind llmx has; `chatgpt` accounts carry email and planType).
struct Account {
  std::string type = "apiKey";
  LLMX_FIELDS(v("type", s.type))
};

struct AccountReadResult {
  Nullable<Account> account;
  bool requiresOpenaiAuth = false;
  LLMX_FIELDS(v("account", s.account); v("requiresOpenaiAuth", s.requiresOpenaiAuth))
};

LLMX_TAGGED(LoginStartApiKey, "apiKey", std::string apiKey; LLMX_FIELDS(v("apiKey", s.apiKey)))
LLMX_TAGGED(LoginStartChatGpt, "chatgpt", LLMX_NO_FIELDS)
// account/login/start params: `{"type":"apiKey","apiKey":…}` or `{"type":"chatgpt"}`.
using LoginStartParams = OneOf<LoginStartApiKey, LoginStartChatGpt>;

struct LoginStartApiKeyResult {
  std::string type = "apiKey";
  LLMX_FIELDS(v("type", s.type))
};

// The reference takes any string here and answers `invalid login id` for a non-UUID.
struct LoginCancelParams {
  std::string loginId;
  LLMX_FIELDS(v("loginId", s.loginId))
};

// `account/login/completed`.
struct LoginCompletedNotification {
  Nullable<std::string> loginId;
  bool success = false;
  Nullable<std::string> error;
  LLMX_FIELDS(v("loginId", s.loginId); v("success", s.success); v("error", s.error))
};

// `account/updated`.
struct AccountUpdatedNotification {
  Nullable<std::string> authMode;  // "apikey" | null
  LLMX_FIELDS(v("authMode", s.authMode))
};

// --- rate limits (v2 shape) -------------------------------------------------------------------------

struct RateLimitWindowV2 {
  int64_t usedPercent = 0;  // the core float, rounded
  Nullable<int64_t> windowDurationMins;
  Nullable<int64_t> resetsAt;  // unix seconds
  LLMX_FIELDS(v("usedPercent", s.usedPercent); v("windowDurationMins", s.windowDurationMins);
              v("resetsAt", s.resetsAt))
};

struct RateLimitSnapshotV2 {
  Nullable<RateLimitWindowV2> primary, secondary;
  LLMX_FIELDS(v("primary", s.primary); v("secondary", s.secondary))
};

RateLimitWindowV2 to_v2(const RateLimitWindow& w);
RateLimitSnapshotV2 to_v2(const RateLimitSnapshot& s);

// account/rateLimits/read's result and account/rateLimits/updated's params.
struct RateLimitsResult {
  RateLimitSnapshotV2 rateLimits;
  LLMX_FIELDS(v("rateLimits", s.rateLimits))
};

// --- feedback/upload ----------------------------------------------------------------------------------

// `conversationId`, when given, must be a UUID (the reference types it as a conversation id).
struct FeedbackUploadParams {
  std::string classification;
  Nullable<std::string> reason;
  Nullable<std::string> conversationId;
  bool includeLogs = false;
  LLMX_FIELDS(v("classification", s.classification); v("reason", s.reason);
              v("conversationId", s.conversationId); v("includeLogs", s.includeLogs))
};

struct FeedbackUploadResult {
  std::string threadId;
  LLMX_FIELDS(v("threadId", s.threadId))
};

// One line of `$LLMX_HOME/feedback.jsonl` (no newline): classification, reason, conversationId,
// includeLogs and `timestamp` (UTC, milliseconds).
std::string feedback_line(const FeedbackUploadParams& p, std::chrono::system_clock::time_point now);
// Appends the line (and a newline) to `<home>/feedback.jsonl`, created with mode 0600. Throws
// std::runtime_error naming the file.
void append_feedback(const std::string& home, const std::string& line);

// --- getConversationSummary ------------------------------------------------------------------------

// Either key; `rolloutPath` wins when both are sent.
struct GetConversationSummaryParams {
  Nullable<std::string> rolloutPath, conversationId;
  LLMX_FIELDS(v("rolloutPath", s.rolloutPath); v("conversationId", s.conversationId))
};

struct GetConversationSummaryResult {
  ConversationSummary summary;
  LLMX_FIELDS(v("summary", s.summary))
};

// The stored thread a getConversationSummary names: an absolute rollout path (a relative one is
// resolved against `home`) or a conversation id. std::invalid_argument (a params error) when
// neither key is given; a conversation id that is not a UUID gives `bad_id`.
struct SummaryTarget {
  std::optional<std::string> path;
  std::optional<std::string> id;
  bool bad_id = false;
};
SummaryTarget summary_target(const GetConversationSummaryParams& p, const std::string& home);

// A stored thread's summary in the wire shape; `default_provider` stands in for a thread that
// recorded no provider. Object sources (`{"subagent":…}`) keep their JSON.
ConversationSummary summary_from(const threads::ThreadSummary& t, const std::string& default_provider);

}  // namespace llmx::api
