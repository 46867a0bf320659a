// Params, results and notifications of the account, auth and utility methods both servers serve
// (protocol.md §3.1-3.3, §3.6, §4.4-4.6; DECISIONS P1, P2): getUserSavedConfig, getUserAgent,
// userInfo, the v1 auth methods, account/*, feedback/upload, getConversationSummary,
// gitDiffToRemote, execOneOffCommand, fuzzyFileSearch. Plain structs with one field list each
// (camelCase wire names, `file_name` kept as the reference spells it), plus the plain code behind
// the methods: fuzzy matching and the file walk, the saved-config reader, the rate-limit
// conversion, the git diff. Nothing here touches actors; the blocking helpers are meant to run
// off the scheduler (see actors/account_methods.cpp).
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

#include "protocol/conversation_api.hpp"
#include "protocol/events.hpp"
#include "protocol/policy.hpp"
#include "protocol/reflect.hpp"
#include "protocol/thread_store.hpp"

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

// --- gitDiffToRemote --------------------------------------------------------------------------------

struct GitDiffToRemoteParams {
  std::string cwd;
  LLMX_FIELDS(v("cwd", s.cwd))
};

struct GitDiffToRemoteResult {
  std::string sha;
  std::string diff;
  LLMX_FIELDS(v("sha", s.sha); v("diff", s.diff))
};

// A finished child process (run_command).
struct CommandOutput {
  int exit_code = -1;
  std::string out, err;
  std::string failure;  // non-empty: it could not run, timed out or said too much
};

// Runs argv (looked up on PATH) with this process's environment plus `extra_env`, stdin at
// /dev/null, capturing stdout and stderr. Blocking: call it off the scheduler. The child is killed
// after `timeout`, or once its output passes `max_bytes` (both reported in `failure`).
CommandOutput run_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                          std::chrono::milliseconds timeout, size_t max_bytes = 256u << 20);

// The commit the local work is compared against, and the diff from it to the working tree
// (tracked changes, then every untracked, not ignored file as an added file). The commit is the
// merge base of HEAD with its upstream, else with the remote's default branch (origin/HEAD,
// origin/main, origin/master), else HEAD itself. nullopt when `cwd` is not inside a work tree
// with a commit or git cannot be run. Blocking: runs git several times.
std::optional<GitDiffToRemoteResult> git_diff_to_remote(const std::string& cwd);

// --- execOneOffCommand ------------------------------------------------------------------------------

struct ExecOneOffCommandParams {
  std::vector<std::string> command;
  Nullable<int64_t> timeoutMs;
  Nullable<std::string> cwd;
  Nullable<SandboxPolicy> sandboxPolicy;
  LLMX_FIELDS(v("command", s.command); v("timeoutMs", s.timeoutMs); v("cwd", s.cwd);
              v("sandboxPolicy", s.sandboxPolicy))
};

struct ExecOneOffCommandResult {
  int64_t exitCode = 0;
  std::string out, err;
  LLMX_FIELDS(v("exitCode", s.exitCode); v("stdout", s.out); v("stderr", s.err))
};

// The default when `timeoutMs` is not given (the reference's exec default).
inline constexpr int64_t kOneOffTimeoutMs = 10000;

// --- fuzzyFileSearch --------------------------------------------------------------------------------

struct FuzzyFileSearchParams {
  std::string query;
  std::vector<std::string> roots;
  Nullable<std::string> cancellationToken;
  LLMX_FIELDS(v("query", s.query); v("roots", s.roots); v("cancellationToken", s.cancellationToken))
};

struct FuzzyFileMatch {
  std::string root;
  std::string path;       // relative to root, `/`-separated
  std::string file_name;  // the last component of path
  int64_t score = 0;
  Nullable<std::vector<uint32_t>> indices;  // matched character (code point) positions in path
  LLMX_FIELDS(v("root", s.root); v("path", s.path); v("file_name", s.file_name); v("score", s.score);
              v("indices", s.indices))
};

struct FuzzyFileSearchResult {
  std::vector<FuzzyFileMatch> files;
  LLMX_FIELDS(v("files", s.files))
};

struct FuzzyScore {
  int64_t score = 0;
  std::vector<uint32_t> indices;  // code point positions in the candidate, ascending
};

// Scores `candidate` against `query`: every whitespace-separated term of the query must appear in
// the candidate as a subsequence (ASCII case-insensitive); nullopt otherwise, and for a query
// without terms. Higher is better: each matched character counts, more so at the start, after a
// `/`, `_`, `-`, `.` or space, at a lowercase-to-uppercase step and right after the previous
// match; gaps cost a little. Each term takes its best alignment.
std::optional<FuzzyScore> fuzzy_score(std::string_view query, std::string_view candidate);

// Score descending, then path ascending (then root).
void sort_matches(std::vector<FuzzyFileMatch>& matches);

inline constexpr size_t kFuzzyMatchesPerRoot = 50;

// Walks each root (files only, `.git` skipped, `.gitignore` rules honoured, symlinked directories
// not followed), keeps the best `per_root` matches of each and returns them all sorted. Stops
// early, returning what it has, when `cancel` becomes true. An empty query gives nothing.
// Blocking: call it off the scheduler.
std::vector<FuzzyFileMatch> fuzzy_file_search(std::string_view query, const std::vector<std::string>& roots,
                                              const std::atomic<bool>* cancel = nullptr,
                                              size_t per_root = kFuzzyMatchesPerRoot);

// One .gitignore pattern matched against a path relative to the .gitignore's directory
// (`dir_only` patterns only match directories). Exposed for tests.
bool gitignore_match(std::string_view pattern, std::string_view rel_path, bool is_dir);

}  // namespace llmx::api
