#include "actors/actors.hpp"

namespace llmx {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<Event>("llmx::Event");
  cfg.add_message_type<ConversationEvents>("llmx::ConversationEvents");
  cfg.add_message_type<Submission>("llmx::Submission");
  cfg.add_message_type<Config>("llmx::Config");
  cfg.add_message_type<SessionConfiguredEvent>("llmx::SessionConfiguredEvent");
  cfg.add_message_type<TaskSpec>("llmx::TaskSpec");
  cfg.add_message_type<RecordItems>("llmx::RecordItems");
  cfg.add_message_type<TaskDone>("llmx::TaskDone");
  cfg.add_message_type<ModelRequest>("llmx::ModelRequest");
  cfg.add_message_type<ModelEvents>("llmx::ModelEvents");
  cfg.add_message_type<ModelRetrying>("llmx::ModelRetrying");
  cfg.add_message_type<ModelFailed>("llmx::ModelFailed");
  cfg.add_message_type<StreamOutcome>("llmx::StreamOutcome");
  cfg.add_message_type<InjectInput>("llmx::InjectInput");
  cfg.add_message_type<ApprovalRequest>("llmx::ApprovalRequest");
  cfg.add_message_type<ApprovalReply>("llmx::ApprovalReply");
  cfg.add_message_type<ApprovalAnswer>("llmx::ApprovalAnswer");
  cfg.add_message_type<ExecRequest>("llmx::ExecRequest");
  cfg.add_message_type<ExecOutput>("llmx::ExecOutput");
  cfg.add_message_type<ExecDone>("llmx::ExecDone");
  cfg.add_message_type<approval_broker_actor>("llmx::approval_broker_actor");
  cfg.add_message_type<exec_sandbox_actor>("llmx::exec_sandbox_actor");
  cfg.add_message_type<event_sink_actor>("llmx::event_sink_actor");
  cfg.add_message_type<conversation_actor>("llmx::conversation_actor");
  cfg.add_message_type<turn_executor_actor>("llmx::turn_executor_actor");
  cfg.add_message_type<model_streamer_actor>("llmx::model_streamer_actor");
}

}  // namespace llmx
