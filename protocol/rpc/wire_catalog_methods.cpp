// The rest of the exported protocol: the account, auth and utility methods both servers serve
// (protocol.md §3.1, §3.6, §4.2, §4.6), and a response type for every request, so a validator
// can check every result the server sends. Names follow the export convention
// PascalCase(method) + "Response" where the params type does not already name it.
#include "protocol/rpc/account_api.hpp"
#include "protocol/rpc/workspace_api.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/schema_gen.hpp"
#include "protocol/rpc/v2_api.hpp"

namespace llmx::schema {

namespace {

// Requests answered with `{}`.
void add_empty_responses(Registry& reg) {
  for (const char* name : {"ArchiveConversationResponse", "SendUserMessageResponse", "SendUserTurnResponse",
                           "RemoveConversationListenerResponse", "SetDefaultModelResponse", "LoginApiKeyResponse",
                           "CancelLoginChatGptResponse", "LogoutChatGptResponse"})
    reg.add_node(name, Dir::v1, object({}));
  for (const char* name : {"ThreadArchiveResponse", "ThreadCompactResponse", "TurnInterruptResponse",
                           "AccountLoginCancelResponse", "AccountLogoutResponse", "ThreadSetNameResponse",
                           "CommandExecTerminateResponse"})
    reg.add_node(name, Dir::v2, object({}));
  // Methods that share a result type.
  for (const char* name : {"ThreadResumeResponse", "ThreadForkResponse"})
    reg.add_node(name, Dir::v2, ref("ThreadStartResponse", Dir::v2));
  for (const char* name : {"ThreadReadResponse", "ThreadUnarchiveResponse", "ThreadRollbackResponse"})
    reg.add_node(name, Dir::v2, ref("ThreadResponse", Dir::v2));
}

void add_v1_utilities(Registry& reg) {
  reg.add<api::GetUserAgentResult>("GetUserAgentResponse", Dir::v1);
  reg.add<api::UserInfoResult>("UserInfoResponse", Dir::v1);
  reg.add<api::UserSavedConfig>("UserSavedConfig", Dir::v1);
  reg.add<api::GetUserSavedConfigResult>("GetUserSavedConfigResponse", Dir::v1);
  reg.add<api::GetConversationSummaryParams>("GetConversationSummaryParams", Dir::v1);
  reg.add<api::GetConversationSummaryResult>("GetConversationSummaryResponse", Dir::v1);
  reg.add<api::GitDiffToRemoteParams>("GitDiffToRemoteParams", Dir::v1);
  reg.add<api::GitDiffToRemoteResult>("GitDiffToRemoteResponse", Dir::v1);
  reg.add<api::ExecOneOffCommandParams>("ExecOneOffCommandParams", Dir::v1);
  reg.add<api::ExecOneOffCommandResult>("ExecOneOffCommandResponse", Dir::v1);
  reg.add<api::FuzzyFileSearchParams>("FuzzyFileSearchParams", Dir::v1);
  reg.add<workspace::FuzzyFileMatch>("FuzzyFileSearchResult", Dir::v1);
  reg.add<api::FuzzyFileSearchResult>("FuzzyFileSearchResponse", Dir::v1);
  reg.add<api::McpModelListResult>("McpModelListResponse", Dir::v1);

}

void add_auth(Registry& reg) {
  // v1
  reg.add<api::LoginApiKeyParams>("LoginApiKeyParams", Dir::v1);
  reg.add<api::GetAuthStatusParams>("GetAuthStatusParams", Dir::v1);
  reg.add<api::GetAuthStatusResult>("GetAuthStatusResponse", Dir::v1);
  reg.add<api::CancelLoginChatGptParams>("CancelLoginChatGptParams", Dir::v1);
  // The answer a ChatGPT login would give; llmx refuses the login with an error (no ChatGPT auth).
  reg.add_node("LoginChatGptResponse", Dir::v1,
               object({prop("loginId", string("uuid")), prop("authUrl", string())}));
  reg.add<api::AuthStatusChangeNotification>("AuthStatusChangeNotification", Dir::v1);
  reg.add<api::LoginChatGptCompleteNotification>("LoginChatGptCompleteNotification", Dir::v1);
  reg.notification<api::AuthStatusChangeNotification>("ServerNotification", "authStatusChange");
  reg.notification<api::LoginChatGptCompleteNotification>("ServerNotification", "loginChatGptComplete");

  // v2
  reg.add<api::AccountReadParams>("AccountReadParams", Dir::v2);
  reg.add<api::Account>("Account", Dir::v2);
  reg.add<api::AccountReadResult>("AccountReadResponse", Dir::v2);
  reg.add<api::LoginStartParams>("LoginAccountParams", Dir::v2);
  reg.add_node("AccountLoginStartResponse", Dir::v2,
               one_of({object({prop("type", constant("apiKey"))}, "ApiKeyLoginAccountResponse"),
                       object({prop("type", constant("chatgpt")), prop("loginId", string("uuid")),
                               prop("authUrl", string())},
                              "ChatgptLoginAccountResponse")}));
  reg.add<api::LoginCancelParams>("CancelLoginAccountParams", Dir::v2);
  reg.add<api::LoginCompletedNotification>("AccountLoginCompletedNotification", Dir::v2);
  reg.add<api::AccountUpdatedNotification>("AccountUpdatedNotification", Dir::v2);
  reg.add<api::RateLimitWindowV2>("RateLimitWindow", Dir::v2);
  reg.add<api::RateLimitSnapshotV2>("RateLimitSnapshot", Dir::v2);
  reg.add<api::RateLimitsResult>("AccountRateLimitsReadResponse", Dir::v2);
  reg.add_node("AccountRateLimitsUpdatedNotification", Dir::v2, ref("AccountRateLimitsReadResponse", Dir::v2));
  reg.add<api::FeedbackUploadParams>("FeedbackUploadParams", Dir::v2);
  reg.add<api::FeedbackUploadResult>("FeedbackUploadResponse", Dir::v2);
  reg.add<api::ModelListData>("ModelListResponse", Dir::v2);
  reg.add<models::ModelPreset>("Model", Dir::v2);
  reg.notification<api::LoginCompletedNotification>("ServerNotification", "account/login/completed");
  reg.notification<api::AccountUpdatedNotification>("ServerNotification", "account/updated");
  reg.notification<api::RateLimitsResult>("ServerNotification", "account/rateLimits/updated");
}

}  // namespace

void add_method_catalog(Registry& reg) {
  add_empty_responses(reg);
  add_v1_utilities(reg);
  add_auth(reg);
}

}  // namespace llmx::schema
