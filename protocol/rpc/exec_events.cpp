#include "protocol/rpc/exec_events.hpp"

#include <fmt/format.h>

#include "protocol/base/json_writer.hpp"
#include "protocol/rpc/mcp_client_api.hpp"
#include "protocol/rpc/v2_events.hpp"

namespace llmx::exec_events {

namespace {

std::string simple(std::string_view type) {
  json::Writer w;
  w.begin_object().field("type", type).end_object();
  return w.take();
}

std::string with_error(std::string_view type, const std::string& message) {
  json::Writer w;
  w.begin_object().field("type", type).key("error").begin_object().field("message", message).end_object();
  w.end_object();
  return w.take();
}

// mcp_tool_call_end's result as the item's result, error and status fields.
void mcp_result(json::Writer& w, const RawJson& result) {
  auto end = mcp::read_call_end(result.text);
  w.key("result");
  if (end.ok) {
    w.begin_object().key("content").raw(end.content).key("structured_content");
    end.structured ? (void)w.raw(*end.structured) : (void)w.null();
    w.end_object();
  } else {
    w.null();
  }
  w.key("error");
  if (end.ok)
    w.null();
  else
    w.begin_object().field("message", end.error).end_object();
  w.field("status", end.failed ? "failed" : "completed");
}

}  // namespace

std::string Translator::next_id() { return fmt::format("item_{}", next_item_++); }

std::string Translator::item_line(std::string_view type, std::string_view item_json) {
  json::Writer w;
  w.begin_object().field("type", type).key("item").raw(item_json).end_object();
  return w.take();
}

void Translator::translate(const Event& ev, std::vector<std::string>& out) {
  const auto& msg = ev.msg;
  json::Writer w;
  if (auto* sc = msg.get_if<SessionConfiguredEvent>()) {
    w.begin_object().field("type", "thread.started").field("thread_id", sc->session_id).end_object();
    out.push_back(w.take());
  } else if (msg.is<TaskStartedEvent>()) {
    error_.reset();
    usage_ = {};
    out.push_back(simple("turn.started"));
  } else if (auto* a = msg.get_if<AgentMessageEvent>()) {
    w.begin_object().field("id", next_id()).field("type", "agent_message").field("text", a->message).end_object();
    out.push_back(item_line("item.completed", w.take()));
  } else if (auto* r = msg.get_if<AgentReasoningEvent>()) {
    w.begin_object().field("id", next_id()).field("type", "reasoning").field("text", r->text).end_object();
    out.push_back(item_line("item.completed", w.take()));
  } else if (auto* b = msg.get_if<ExecCommandBeginEvent>()) {
    auto& run = running_[b->call_id];
    run.id = next_id();
    run.kind = Running::Kind::command;
    run.command = v2::join_command(b->command);
    w.begin_object().field("id", run.id).field("type", "command_execution").field("command", run.command);
    w.field("aggregated_output", "").key("exit_code").null().field("status", "in_progress").end_object();
    out.push_back(item_line("item.started", w.take()));
  } else if (auto* e = msg.get_if<ExecCommandEndEvent>()) {
    auto it = running_.find(e->call_id);
    auto id = it != running_.end() ? it->second.id : next_id();
    auto command = it != running_.end() ? it->second.command : std::string();
    if (it != running_.end()) running_.erase(it);
    w.begin_object().field("id", id).field("type", "command_execution").field("command", command);
    w.field("aggregated_output", e->aggregated_output).field("exit_code", e->exit_code);
    w.field("status", e->exit_code == 0 ? "completed" : "failed").end_object();
    out.push_back(item_line("item.completed", w.take()));
  } else if (auto* pb = msg.get_if<PatchApplyBeginEvent>()) {
    auto& run = running_[pb->call_id];
    run.id = next_id();
    run.kind = Running::Kind::patch;
    json::Writer changes;
    changes.begin_array();
    for (const auto& [path, change] : pb->changes)
      changes.begin_object().field("path", path).field("kind", change.kind()).end_object();
    changes.end_array();
    run.changes = changes.take();
  } else if (auto* pe = msg.get_if<PatchApplyEndEvent>()) {
    auto it = running_.find(pe->call_id);
    auto id = it != running_.end() ? it->second.id : next_id();
    auto changes = it != running_.end() ? it->second.changes : std::string("[]");
    if (it != running_.end()) running_.erase(it);
    w.begin_object().field("id", id).field("type", "file_change").key("changes").raw(changes);
    w.field("status", pe->success ? "completed" : "failed").end_object();
    out.push_back(item_line("item.completed", w.take()));
  } else if (auto* mb = msg.get_if<McpToolCallBeginEvent>()) {
    auto& run = running_[mb->call_id];
    run.id = next_id();
    run.kind = Running::Kind::mcp;
    run.invocation = mb->invocation;
    w.begin_object().field("id", run.id).field("type", "mcp_tool_call").field("server", mb->invocation.server);
    w.field("tool", mb->invocation.tool).key("arguments");
    mb->invocation.arguments ? (void)w.raw(mb->invocation.arguments->text) : (void)w.null();
    w.key("result").null().key("error").null().field("status", "in_progress").end_object();
    out.push_back(item_line("item.started", w.take()));
  } else if (auto* me = msg.get_if<McpToolCallEndEvent>()) {
    auto it = running_.find(me->call_id);
    auto id = it != running_.end() ? it->second.id : next_id();
    if (it != running_.end()) running_.erase(it);
    w.begin_object().field("id", id).field("type", "mcp_tool_call").field("server", me->invocation.server);
    w.field("tool", me->invocation.tool).key("arguments");
    me->invocation.arguments ? (void)w.raw(me->invocation.arguments->text) : (void)w.null();
    mcp_result(w, me->result);
    w.end_object();
    out.push_back(item_line("item.completed", w.take()));
  } else if (auto* plan = msg.get_if<PlanUpdateEvent>()) {
    json::Writer items;
    items.begin_array();
    for (const auto& step : plan->plan)
      items.begin_object().field("text", step.step).field("completed", step.status == StepStatus::completed).end_object();
    items.end_array();
    todo_items_ = items.take();
    bool first = !todo_id_;
    if (first) todo_id_ = next_id();
    w.begin_object().field("id", *todo_id_).field("type", "todo_list").key("items").raw(todo_items_).end_object();
    out.push_back(item_line(first ? "item.started" : "item.updated", w.take()));
  } else if (auto* warn = msg.get_if<WarningEvent>()) {
    w.begin_object().field("id", next_id()).field("type", "error").field("message", warn->message).end_object();
    out.push_back(item_line("item.completed", w.take()));
  } else if (auto* err = msg.get_if<ErrorEvent>()) {
    error_ = err->message;
    w.begin_object().field("type", "error").field("message", err->message).end_object();
    out.push_back(w.take());
  } else if (auto* tc = msg.get_if<TokenCountEvent>()) {
    if (tc->info) usage_ = tc->info->total_token_usage;
  } else if (msg.is<TaskCompleteEvent>() || msg.is<TurnAbortedEvent>()) {
    finish_running(out);
    if (todo_id_) {  // the plan as it stood at the end
      w.begin_object().field("id", *todo_id_).field("type", "todo_list").key("items").raw(todo_items_).end_object();
      out.push_back(item_line("item.completed", w.take()));
      todo_id_.reset();
    }
    if (auto* aborted = msg.get_if<TurnAbortedEvent>()) {
      out.push_back(with_error("turn.failed", "turn aborted: " + std::string(enum_name(aborted->reason))));
    } else if (error_) {
      out.push_back(with_error("turn.failed", *error_));
    } else {
      json::Writer done;
      done.begin_object().field("type", "turn.completed").key("usage").begin_object();
      done.field("input_tokens", usage_.input_tokens).field("cached_input_tokens", usage_.cached_input_tokens);
      // The prompt-cache writes are not reported by either wire llmx speaks: 0, as the SDK assumes.
      done.field("cache_write_input_tokens", 0).field("output_tokens", usage_.output_tokens);
      done.field("reasoning_output_tokens", usage_.reasoning_output_tokens).end_object().end_object();
      out.push_back(done.take());
    }
  }
}

void Translator::finish_running(std::vector<std::string>& out) {
  for (auto& [call_id, run] : running_) {
    json::Writer w;
    w.begin_object().field("id", run.id);
    switch (run.kind) {
      case Running::Kind::command:
        w.field("type", "command_execution").field("command", run.command).field("aggregated_output", "");
        w.key("exit_code").null();
        break;
      case Running::Kind::patch:
        w.field("type", "file_change").key("changes").raw(run.changes.empty() ? "[]" : run.changes);
        break;
      case Running::Kind::mcp:
        w.field("type", "mcp_tool_call").field("server", run.invocation ? run.invocation->server : "");
        w.field("tool", run.invocation ? run.invocation->tool : "").key("arguments");
        run.invocation && run.invocation->arguments ? (void)w.raw(run.invocation->arguments->text) : (void)w.null();
        w.key("result").null().key("error").begin_object().field("message", "the turn ended before the call did");
        w.end_object();
        break;
    }
    w.field("status", "failed").end_object();
    out.push_back(item_line("item.completed", w.take()));
  }
  running_.clear();
}

schema::Node json_schema() {
  using namespace schema;
  auto item = [](std::string type, std::vector<Property> more) {
    std::vector<Property> props{prop("id", string()), prop("type", constant(type))};
    for (auto& p : more) props.push_back(std::move(p));
    return object(std::move(props), "Exec" + pascal_case(type) + "Item");
  };
  auto status = [](std::vector<std::string> values) { return enum_strings(std::move(values)); };
  auto items = one_of({
      item("agent_message", {prop("text", string())}),
      item("reasoning", {prop("text", string())}),
      item("command_execution", {prop("command", string()), prop("aggregated_output", string()),
                                 prop("exit_code", nullable(integer())),
                                 prop("status", status({"in_progress", "completed", "failed"}))}),
      item("file_change",
           {prop("changes", array(object({prop("path", string()), prop("kind", status({"add", "delete", "update"}))},
                                         "ExecFileUpdateChange"))),
            prop("status", status({"completed", "failed"}))}),
      item("mcp_tool_call",
           {prop("server", string()), prop("tool", string()), prop("arguments", any()),
            prop("result", nullable(object({prop("content", array(any())), prop("structured_content", any())},
                                           "ExecMcpToolCallResult"))),
            prop("error", nullable(object({prop("message", string())}, "ExecMcpToolCallError"))),
            prop("status", status({"in_progress", "completed", "failed"}))}),
      item("todo_list",
           {prop("items", array(object({prop("text", string()), prop("completed", boolean())}, "ExecTodoItem")))}),
      item("error", {prop("message", string())}),
  });
  auto event = [](std::string type, std::vector<Property> more) {
    std::vector<Property> props{prop("type", constant(type))};
    for (auto& p : more) props.push_back(std::move(p));
    std::string title;
    for (char c : type) title += c == '.' ? '_' : c;
    return object(std::move(props), "Exec" + pascal_case(title) + "Event");
  };
  auto error = object({prop("message", string())}, "ExecThreadError");
  return one_of({
      event("thread.started", {prop("thread_id", string())}),
      event("turn.started", {}),
      event("turn.completed",
            {prop("usage", object({prop("input_tokens", integer()), prop("cached_input_tokens", integer()),
                                   prop("cache_write_input_tokens", integer()), prop("output_tokens", integer()),
                                   prop("reasoning_output_tokens", integer())},
                                  "ExecUsage"))}),
      event("turn.failed", {prop("error", error)}),
      event("item.started", {prop("item", items)}),
      event("item.updated", {prop("item", items)}),
      event("item.completed", {prop("item", items)}),
      event("error", {prop("message", string())}),
  });
}

}  // namespace llmx::exec_events
