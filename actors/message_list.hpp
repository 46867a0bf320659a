// Every type that crosses an actor boundary, in one list beside actors.hpp: add_message_types
// registers each under its name (so messages can leave the process through CAF's middleman), and
// the serialisation test round-trips each. A new message type is one line here.
#pragma once

#include "actors/actors.hpp"

// X(type, "registered name"): value types first, then the actor handles messages carry.
#define LLMX_MESSAGE_VALUE_TYPES(X)                      \
  X(Event, "llmx::Event")                                \
  X(TurnEvents, "llmx::TurnEvents")                      \
  X(ConversationEvents, "llmx::ConversationEvents")      \
  X(Submission, "llmx::Submission")                      \
  X(Config, "llmx::Config")                              \
  X(SessionConfiguredEvent, "llmx::SessionConfiguredEvent") \
  X(TaskSpec, "llmx::TaskSpec")                          \
  X(InjectInput, "llmx::InjectInput")                    \
  X(FileDelegate, "llmx::FileDelegate")                  \
  X(FileIo, "llmx::FileIo")                              \
  X(FileIoDone, "llmx::FileIoDone")                      \
  X(RecordItems, "llmx::RecordItems")                    \
  X(ReplaceHistory, "llmx::ReplaceHistory")              \
  X(TaskDone, "llmx::TaskDone")                          \
  X(ModelRequest, "llmx::ModelRequest")                  \
  X(ModelEvents, "llmx::ModelEvents")                    \
  X(ModelRetrying, "llmx::ModelRetrying")                \
  X(ModelFailed, "llmx::ModelFailed")                    \
  X(WireFallback, "llmx::WireFallback")                  \
  X(ModelsQuery, "llmx::ModelsQuery")                    \
  X(ModelLookup, "llmx::ModelLookup")                    \
  X(ModelsFetched, "llmx::ModelsFetched")                \
  X(models::ModelCatalog, "llmx::models::ModelCatalog")  \
  X(models::ModelSpec, "llmx::models::ModelSpec")        \
  X(StreamOutcome, "llmx::StreamOutcome")                \
  X(RolloutAppend, "llmx::RolloutAppend")                \
  X(RolloutFailed, "llmx::RolloutFailed")                \
  X(ThreadRef, "llmx::ThreadRef")                        \
  X(ListThreads, "llmx::ListThreads")                    \
  X(ThreadPage, "llmx::ThreadPage")                      \
  X(ThreadSummaryReply, "llmx::ThreadSummaryReply")      \
  X(LoadThread, "llmx::LoadThread")                      \
  X(LoadedThread, "llmx::LoadedThread")                  \
  X(ResumeThread, "llmx::ResumeThread")                  \
  X(ReadThread, "llmx::ReadThread")                      \
  X(LoadedThreads, "llmx::LoadedThreads")                \
  X(StoredThread, "llmx::StoredThread")                  \
  X(ApprovalRequest, "llmx::ApprovalRequest")            \
  X(ApprovalReply, "llmx::ApprovalReply")                \
  X(ApprovalAnswer, "llmx::ApprovalAnswer")              \
  X(ExecRequest, "llmx::ExecRequest")                    \
  X(ExecOutput, "llmx::ExecOutput")                      \
  X(ExecDone, "llmx::ExecDone")                          \
  X(McpConnect, "llmx::McpConnect")                      \
  X(McpServerStatus, "llmx::McpServerStatus")            \
  X(McpServers, "llmx::McpServers")                      \
  X(McpCall, "llmx::McpCall")                            \
  X(McpCallResult, "llmx::McpCallResult")                \
  X(McpProgress, "llmx::McpProgress")                    \
  X(McpElicitation, "llmx::McpElicitation")              \
  X(McpElicitationReply, "llmx::McpElicitationReply")    \
  X(NodeAttach, "llmx::NodeAttach")                      \
  X(NodeAttached, "llmx::NodeAttached")                  \
  X(TaskStart, "llmx::TaskStart")                        \
  X(TaskWatch, "llmx::TaskWatch")                        \
  X(TaskList, "llmx::TaskList")                          \
  X(mcp::TaskView, "llmx::mcp::TaskView")                \
  X(mcp::TaskPage, "llmx::mcp::TaskPage")                \
  X(TaskAsk, "llmx::TaskAsk")                            \
  X(TaskInput, "llmx::TaskInput")

#define LLMX_MESSAGE_HANDLE_TYPES(X)                                    \
  X(event_sink_actor, "llmx::event_sink_actor")                         \
  X(pressure_sink_actor, "llmx::pressure_sink_actor")                   \
  X(line_writer_actor, "llmx::line_writer_actor")                       \
  X(session_actor, "llmx::session_actor")                               \
  X(rollout_store_actor, "llmx::rollout_store_actor")                   \
  X(model_streamer_actor, "llmx::model_streamer_actor")                 \
  X(approval_broker_actor, "llmx::approval_broker_actor")               \
  X(exec_sandbox_actor, "llmx::exec_sandbox_actor")                     \
  X(turn_executor_actor, "llmx::turn_executor_actor")                   \
  X(conversation_actor, "llmx::conversation_actor")                     \
  X(conversation_manager_actor, "llmx::conversation_manager_actor")   \
  X(mcp_client_actor, "llmx::mcp_client_actor")                       \
  X(mcp_hub_actor, "llmx::mcp_hub_actor")                             \
  X(model_registry_actor, "llmx::model_registry_actor")               \
  X(node_actor, "llmx::node_actor")
