// The app server's v2 types and methods in the schema registry (protocol.md §4), plus the
// schema hooks of the v2 types whose encoders are written by hand (v2_api.cpp).
#include "protocol/rpc/account_api.hpp"
#include "protocol/rpc/conversation_api.hpp"
#include "protocol/rpc/v2_api.hpp"
#include "protocol/rpc/v2_config.hpp"
#include "protocol/rpc/wire_catalog.hpp"

namespace llmx::v2 {

using namespace llmx::schema;

Node json_schema(const UserInputV2*, Context&) {
  auto variant = [](std::string tag, std::string key) {
    return object({prop("type", constant(tag)), prop(std::move(key), string())}, pascal_case(tag) + "UserInput");
  };
  return one_of({variant("text", "text"), variant("image", "url"), variant("localImage", "path")});
}

Node json_schema(const ThreadItem*, Context&) {
  auto item = [](std::string tag, std::vector<Property> more) {
    std::vector<Property> props{prop("type", constant(tag)), prop("id", string())};
    for (auto& p : more) props.push_back(std::move(p));
    return object(std::move(props), pascal_case(tag) + "ThreadItem");
  };
  auto user_input = one_of({object({prop("type", constant("text")), prop("text", string())}),
                            object({prop("type", constant("image")), prop("url", string())}),
                            object({prop("type", constant("localImage")), prop("path", string())})});
  return one_of({
      item("userMessage", {prop("content", array(user_input))}),
      item("agentMessage", {prop("text", string())}),
      item("reasoning", {prop("text", string())}),
      item("commandExecution",
           {prop("command", string()), prop("aggregated_output", string()), prop("exit_code", nullable(integer())),
            prop("status", enum_strings({"inProgress", "completed", "failed"})),
            prop("duration_ms", nullable(integer()))}),
      item("mcpToolCall",
           {prop("server", string()), prop("tool", string()), prop("arguments", any()),
            prop("result", nullable(object({prop("content", array(any())), prop("structuredContent", any())},
                                           "McpToolCallResult"))),
            prop("error", nullable(object({prop("message", string())}, "McpToolCallError"))),
            prop("status", enum_strings({"inProgress", "completed", "failed"})),
            prop("duration_ms", nullable(integer()))}),
  });
}

}  // namespace llmx::v2

namespace llmx::schema {

void add_v2_catalog(Registry& reg) {
  reg.add<v2::ClientInfo>("ClientInfo", Dir::v2);
  reg.add<v2::InitializeParams>("InitializeParams", Dir::v2);
  reg.add<v2::InitializeResult>("InitializeResponse", Dir::v2);
  reg.add<v2::ApprovalPolicy>("AskForApproval", Dir::v2);
  reg.add<v2::SandboxModeV2>("SandboxMode", Dir::v2);
  reg.add<v2::Thread>("Thread", Dir::v2);
  reg.add<v2::ThreadStartParams>("ThreadStartParams", Dir::v2);
  reg.add<v2::ThreadStatus>("ThreadStatus", Dir::v2);
  reg.add<v2::GitInfo>("GitInfo", Dir::v2);
  reg.add<v2::ThreadOpenedResult>("ThreadStartResponse", Dir::v2);
  reg.add<v2::ThreadResult>("ThreadResponse", Dir::v2);
  reg.add<v2::ThreadForkParams>("ThreadForkParams", Dir::v2);
  reg.add<v2::ThreadReadParams>("ThreadReadParams", Dir::v2);
  reg.add<v2::ThreadRollbackParams>("ThreadRollbackParams", Dir::v2);
  reg.add<v2::ThreadSetNameParams>("ThreadSetNameParams", Dir::v2);
  reg.add<v2::ThreadLoadedListParams>("ThreadLoadedListParams", Dir::v2);
  reg.add<v2::ThreadLoadedListResult>("ThreadLoadedListResponse", Dir::v2);
  reg.add<v2::TurnSteerParams>("TurnSteerParams", Dir::v2);
  reg.add<v2::TurnSteerResult>("TurnSteerResponse", Dir::v2);
  reg.add<v2::ThreadIdNotification>("ThreadIdNotification", Dir::v2);
  reg.add<v2::ThreadNameUpdatedNotification>("ThreadNameUpdatedNotification", Dir::v2);
  reg.add<v2::ConfigReadParams>("ConfigReadParams", Dir::v2);
  reg.add<v2::ConfigLayer>("ConfigLayer", Dir::v2);
  reg.add<v2::ConfigReadResult>("ConfigReadResponse", Dir::v2);
  reg.add<v2::CommandExecParams>("CommandExecParams", Dir::v2);
  reg.add<v2::CommandExecResult>("CommandExecResponse", Dir::v2);
  reg.add<v2::CommandExecOutputDelta>("CommandExecOutputDeltaNotification", Dir::v2);
  reg.add<v2::CommandExecTerminateParams>("CommandExecTerminateParams", Dir::v2);
  reg.add<v2::ThreadIdParams>("ThreadIdParams", Dir::v2);
  reg.add<v2::ThreadListParams>("ThreadListParams", Dir::v2);
  reg.add<v2::ThreadListResult>("ThreadListResponse", Dir::v2);
  reg.add<v2::UserInputV2>("UserInput", Dir::v2);
  reg.add<v2::ThreadItem>("ThreadItem", Dir::v2);
  reg.add<v2::TurnError>("TurnError", Dir::v2);
  reg.add<v2::Turn>("Turn", Dir::v2);
  reg.add<v2::TurnResult>("TurnStartResponse", Dir::v2);
  reg.add<v2::TurnStartParams>("TurnStartParams", Dir::v2);
  reg.add<v2::TurnInterruptParams>("TurnInterruptParams", Dir::v2);
  reg.add<v2::Usage>("Usage", Dir::v2);
  reg.add<v2::TurnCompletedNotification>("TurnCompletedNotification", Dir::v2);
  reg.add<v2::ItemNotification>("ItemNotification", Dir::v2);
  reg.add<v2::DeltaNotification>("DeltaNotification", Dir::v2);
  reg.add<v2::ProgressNotification>("McpToolCallProgressNotification", Dir::v2);

  reg.notification<v2::ThreadResult>("ServerNotification", "thread/started");
  reg.notification<v2::ThreadIdNotification>("ServerNotification", "thread/archived");
  reg.notification<v2::ThreadIdNotification>("ServerNotification", "thread/unarchived");
  reg.notification<v2::ThreadNameUpdatedNotification>("ServerNotification", "thread/name/updated");
  reg.notification<v2::CommandExecOutputDelta>("ServerNotification", "command/exec/outputDelta");
  reg.notification<v2::TurnResult>("ServerNotification", "turn/started");
  reg.notification<v2::TurnCompletedNotification>("ServerNotification", "turn/completed");
  reg.notification<v2::ItemNotification>("ServerNotification", "item/started");
  reg.notification<v2::ItemNotification>("ServerNotification", "item/completed");
  reg.notification<v2::DeltaNotification>("ServerNotification", "item/agentMessage/delta");
  reg.notification<v2::DeltaNotification>("ServerNotification", "item/commandExecution/outputDelta");
  reg.notification<v2::ProgressNotification>("ServerNotification", "item/mcpToolCall/progress");
  // `llmx/event/<type>` for every core event kind (§3.4).
  reg.add<api::EventNotification>("EventNotification", Dir::v1);
  using Alts = decltype(EventMsg::value);
  [&]<size_t... I>(std::index_sequence<I...>) {
    (reg.notification<api::EventNotification>(
         "ServerNotification", "llmx/event/" + std::string(std::variant_alternative_t<I, Alts>::kind)),
     ...);
  }(std::make_index_sequence<std::variant_size_v<Alts>>{});
}

}  // namespace llmx::schema
