#include "protocol/rpc/v2_events.hpp"

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_client_api.hpp"
#include "protocol/rpc/v2_api.hpp"

namespace llmx::v2 {

namespace {

constexpr size_t kKeptOutputBytes = 64 * 1024;  // an item carries the head of a long output

std::string quote_arg(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\n'\"\\$`!*?&|;<>()[]{}#~") == std::string::npos) return a;
  std::string out = "'";
  for (char c : a) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string agent_text(const AgentMessageTurnItem& m) {
  std::string text;
  for (const auto& c : m.content)
    if (auto* t = c.get_if<AgentText>()) text += t->text;
  return text;
}

// A core turn item as a v2 thread item (§4.4).
std::optional<std::string> thread_item(const TurnItem& item) {
  if (auto* u = item.get_if<UserMessageTurnItem>()) return user_message_item(u->id, u->content).json.text;
  if (auto* a = item.get_if<AgentMessageTurnItem>()) return text_item("agentMessage", a->id, agent_text(*a));
  if (auto* r = item.get_if<ReasoningTurnItem>()) {
    std::string text;
    for (const auto& s : r->summary_text) text += (text.empty() ? "" : "\n") + s;
    return text_item("reasoning", r->id, text);
  }
  return std::nullopt;
}

std::string command_item(const std::string& id, const std::string& command, const std::string& output,
                         std::optional<int64_t> exit_code, std::string_view status, std::optional<int64_t> duration_ms) {
  json::Writer w;
  w.begin_object().field("type", "commandExecution").field("id", id).field("command", command);
  w.field("aggregated_output", output);
  w.key("exit_code");
  exit_code ? (void)w.number(*exit_code) : (void)w.null();
  w.field("status", status);
  w.key("duration_ms");
  duration_ms ? (void)w.number(*duration_ms) : (void)w.null();
  w.end_object();
  return w.take();
}

}  // namespace

std::string text_item(std::string_view type, const std::string& id, const std::string& text) {
  json::Writer w;
  w.begin_object().field("type", type).field("id", id).field("text", text).end_object();
  return w.take();
}

std::string mcp_item(const std::string& id, const McpInvocation& inv, const McpToolCallEndEvent* end) {
  json::Writer w;
  w.begin_object().field("type", "mcpToolCall").field("id", id).field("server", inv.server).field("tool", inv.tool);
  w.key("arguments");
  inv.arguments ? (void)w.raw(inv.arguments->text) : (void)w.null();
  std::optional<mcp::CallEnd> done;
  if (end) done = mcp::read_call_end(end->result.text);
  w.key("result");
  if (done && done->ok) {
    w.begin_object().key("content").raw(done->content).key("structuredContent");
    done->structured ? (void)w.raw(*done->structured) : (void)w.null();
    w.end_object();
  } else {
    w.null();
  }
  std::optional<std::string> error;
  if (done && !done->ok) error = done->error;
  std::string_view status = !done ? "inProgress" : done->failed ? "failed" : "completed";
  w.key("error");
  if (error)
    w.begin_object().field("message", *error).end_object();
  else
    w.null();
  w.field("status", status);
  w.key("duration_ms");
  if (end)
    w.number(static_cast<int64_t>(end->duration.secs * 1000 + end->duration.nanos / 1000000));
  else
    w.null();
  w.end_object();
  return w.take();
}

namespace {

void add_item(rpc::Notes& out, std::string_view method, const std::string& item_json) {
  json::Writer w(out.add(method));
  w.begin_object().key("item").raw(item_json).end_object();
}

template <class T>
void add(rpc::Notes& out, std::string_view method, const T& params) {
  json::Writer w(out.add(method));
  json::write_value(w, params);
}

}  // namespace

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + quote_arg(a);
  return out;
}

void EventTranslator::translate(const Event& ev, rpc::Notes& out) {
  const auto& msg = ev.msg;
  if (auto* s = msg.get_if<ItemStartedEvent>()) {
    if (auto item = thread_item(s->item)) add_item(out, "item/started", *item);
  } else if (auto* c = msg.get_if<ItemCompletedEvent>()) {
    if (auto item = thread_item(c->item)) add_item(out, "item/completed", *item);
  } else if (auto* d = msg.get_if<AgentMessageContentDeltaEvent>()) {
    add(out, "item/agentMessage/delta", DeltaNotification{d->item_id.str(), d->delta});
  } else if (auto* b = msg.get_if<ExecCommandBeginEvent>()) {
    auto& cmd = commands_[b->call_id];
    cmd.command = join_command(b->command);
    add_item(out, "item/started",
             command_item(b->call_id, cmd.command, "", std::nullopt, "inProgress", std::nullopt));
  } else if (auto* o = msg.get_if<ExecCommandOutputDeltaEvent>()) {
    auto& cmd = commands_[o->call_id];
    if (cmd.output.size() < kKeptOutputBytes) cmd.output += o->chunk.bytes.substr(0, kKeptOutputBytes - cmd.output.size());
    add(out, "item/commandExecution/outputDelta", DeltaNotification{o->call_id, o->chunk.bytes});
  } else if (auto* e = msg.get_if<ExecCommandEndEvent>()) {
    auto it = commands_.find(e->call_id);
    std::string command = it != commands_.end() ? it->second.command : std::string();
    std::string output = !e->aggregated_output.empty() ? e->aggregated_output
                                                        : (it != commands_.end() ? it->second.output : std::string());
    if (it != commands_.end()) commands_.erase(it);
    auto ms = static_cast<int64_t>(e->duration.secs * 1000 + e->duration.nanos / 1000000);
    add_item(out, "item/completed",
             command_item(e->call_id, command, output, e->exit_code, e->exit_code == 0 ? "completed" : "failed", ms));
  } else if (auto* mb = msg.get_if<McpToolCallBeginEvent>()) {
    add_item(out, "item/started", mcp_item(mb->call_id, mb->invocation, nullptr));
  } else if (auto* mp = msg.get_if<McpToolCallProgressEvent>()) {
    add(out, "item/mcpToolCall/progress", ProgressNotification{mp->call_id, mp->message});
  } else if (auto* me = msg.get_if<McpToolCallEndEvent>()) {
    add_item(out, "item/completed", mcp_item(me->call_id, me->invocation, me));
  } else if (auto* err = msg.get_if<ErrorEvent>()) {
    error_ = err->message;
  } else if (auto* tc = msg.get_if<TokenCountEvent>()) {
    if (tc->info) last_usage_ = tc->info->last_token_usage;
  } else if (auto* nu = msg.get_if<ThreadNameUpdatedEvent>()) {
    add(out, "thread/name/updated", ThreadNameUpdatedNotification{nu->thread_id, nu->thread_name});
  } else if (msg.is<TaskCompleteEvent>() || msg.is<TurnAbortedEvent>()) {
    TurnCompletedNotification n;
    n.turn.id = ev.id;
    if (msg.is<TurnAbortedEvent>()) {
      n.turn.status = TurnStatus::interrupted;
    } else if (error_) {
      n.turn.status = TurnStatus::failed;
      n.turn.error = TurnError{*error_};
    } else {
      n.turn.status = TurnStatus::completed;
    }
    n.usage = Usage{last_usage_.input_tokens, last_usage_.cached_input_tokens, last_usage_.output_tokens};
    add(out, "turn/completed", n);
    error_.reset();
    last_usage_ = {};
    commands_.clear();
  }
}

}  // namespace llmx::v2
