#include "protocol/rpc/mcp.hpp"

#include "protocol/rpc/conversation_api.hpp"

#include <array>

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/mcp_tasks.hpp"

namespace llmx::mcp {

std::string negotiate_version(const std::string& requested) {
  static constexpr std::array<std::string_view, 4> supported = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                                 "2024-11-05"};
  for (auto v : supported)
    if (v == requested) return requested;
  return std::string(kLatestProtocolVersion);
}

ClientCapabilities read_client_capabilities(const RawJson& capabilities) {
  ClientCapabilities caps;
  json::Parser parser;
  try {
    auto root = parser.parse(capabilities.text);
    if (!root.is_object()) return caps;
    auto o = root.get_object().value_unsafe();
    if (auto e = json::object_if(o, "elicitation")) {
      // 2025-06-18 declared `elicitation: {}`, which 2025-11-25 reads as form mode.
      bool form = json::get(*e, "form").has_value(), url = json::get(*e, "url").has_value();
      caps.elicitation_form = form || !url;
      caps.elicitation_url = url;
    }
    caps.tasks = json::object_if(o, "tasks").has_value();
  } catch (const json::DecodeError&) {
  }
  return caps;
}

namespace {

// Our icon, inline (a host needs no network to show it): a terminal prompt on a dark square.
constexpr std::string_view kIcon =
    "data:image/svg+xml;base64,"
    "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCA2NCA2NCI+PHJlY3Qgd2lkdGg9IjY0IiBoZWln"
    "aHQ9IjY0IiByeD0iMTIiIGZpbGw9IiMxZjI5MzciLz48cGF0aCBkPSJNMTQgMjBsMTQgMTItMTQgMTIiIGZpbGw9Im5vbmUiIHN0cm9rZT0i"
    "IzM0ZDM5OSIgc3Ryb2tlLXdpZHRoPSI2IiBzdHJva2UtbGluZWNhcD0icm91bmQiIHN0cm9rZS1saW5lam9pbj0icm91bmQiLz48cGF0aCBk"
    "PSJNMzIgNDZoMTgiIHN0cm9rZT0iI2U1ZTdlYiIgc3Ryb2tlLXdpZHRoPSI2IiBzdHJva2UtbGluZWNhcD0icm91bmQiLz48L3N2Zz4=";

void icons(json::Writer& w) {
  w.key("icons").begin_array().begin_object().field("src", kIcon).field("mimeType", "image/svg+xml");
  w.key("sizes").begin_array().string("any").end_array().end_object().end_array();
}

}  // namespace

namespace {
// `{` + fields + the rest of `object` (fields: `"k":v,...` without braces).
std::string prepend_fields(std::string_view object, std::string_view fields) {
  std::string out = "{";
  out += fields;
  std::string_view rest = object.substr(1);
  auto first = rest.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && rest[first] != '}') out += ',';
  out += rest;
  return out;
}
}  // namespace

std::string with_meta(std::string_view object, std::string_view meta) {
  return prepend_fields(object, "\"_meta\":" + std::string(meta));
}

std::string stateless_result(std::string_view object) {
  json::Writer w;
  w.begin_object().key("io.modelcontextprotocol/serverInfo").begin_object();
  w.field("name", "llmx-mcp-server").field("title", "LLMX").field("version", LLMX_VERSION).end_object().end_object();
  std::string fields = "\"_meta\":" + w.take();
  if (!object.starts_with("{\"resultType\"")) fields = "\"resultType\":\"complete\"," + fields;
  return prepend_fields(object, fields);
}

std::string_view server_instructions() {
  return "llmx is a coding agent. Call the `llmx` tool with a task in `prompt` (and optionally `cwd`, "
         "`model`, `sandbox`, `approval-policy`): the agent reads code, runs commands and edits files "
         "until the task is done, then returns its final answer with a `threadId`. Continue the same "
         "conversation with `llmx-reply` {threadId as conversationId, prompt}. A turn can take minutes: "
         "call the tools as tasks where you can, or pass a progressToken to follow it. Commands that "
         "need approval are asked through elicitation when you declare it; otherwise the approval "
         "policy alone decides.";
}

void write_json(json::Writer& w, const InitializeResult& x) {
  w.begin_object();
  w.key("capabilities").begin_object();
  w.key("tools").begin_object().field("listChanged", false).end_object();
  w.key("logging").begin_object().end_object();
  if (x.tasks) {
    w.key("tasks").begin_object().key("list").begin_object().end_object().key("cancel").begin_object().end_object();
    w.key("requests").begin_object().key("tools").begin_object().key("call").begin_object().end_object();
    w.end_object().end_object().end_object();
  }
  w.end_object();
  w.field("protocolVersion", x.protocol_version);
  w.key("serverInfo").begin_object().field("name", "llmx-mcp-server").field("title", "LLMX");
  w.field("version", LLMX_VERSION);
  w.field("description", "A coding agent for any model: it runs commands in a sandbox and edits files.");
  icons(w);
  w.field("user_agent", x.user_agent).end_object();
  w.field("instructions", server_instructions());
  w.end_object();
}

namespace {
void string_prop(json::Writer& w, std::string_view name, std::string_view description) {
  w.key(name).begin_object().field("type", "string").field("description", description).end_object();
}

void enum_prop(json::Writer& w, std::string_view name, std::string_view description,
               std::initializer_list<std::string_view> values) {
  w.key(name).begin_object().field("type", "string").field("description", description);
  w.key("enum").begin_array();
  for (auto v : values) w.string(v);
  w.end_array().end_object();
}

void output_schema(json::Writer& w) {
  w.key("outputSchema").begin_object().field("type", "object");
  w.key("properties").begin_object();
  string_prop(w, "threadId", "The conversation id; pass it to llmx-reply to continue.");
  string_prop(w, "content", "The agent's final message.");
  w.end_object();
  w.key("required").begin_array().string("threadId").string("content").end_array();
  w.end_object();
}

// What a host may assume of both tools: an agent turn runs commands and edits files (it may
// destroy, and it reaches the model's provider and maybe the network), and asking twice is
// another turn, not the same one.
void tool_traits(json::Writer& w) {
  w.key("annotations").begin_object().field("readOnlyHint", false).field("destructiveHint", true);
  w.field("idempotentHint", false).field("openWorldHint", true).end_object();
  icons(w);
}
}  // namespace

void write_json(json::Writer& w, const ToolsListResult& x) {
  auto execution = [&] {
    if (x.tasks) w.key("execution").begin_object().field("taskSupport", "optional").end_object();
  };
  w.begin_object().key("tools").begin_array();

  w.begin_object().field("name", "llmx").field("title", "LLMX");
  w.field("description",
          "Start an llmx coding-agent conversation: the agent works on the prompt in the given working "
          "directory (running commands and editing files as the sandbox and approval policy allow) and "
          "returns its final answer together with the conversation id.");
  w.key("inputSchema").begin_object().field("type", "object").key("properties").begin_object();
  string_prop(w, "prompt", "The first user message of the conversation.");
  string_prop(w, "model", "Model to use instead of the configured one.");
  string_prop(w, "profile", "Configuration profile from config.toml.");
  string_prop(w, "cwd", "Working directory; a relative path is resolved against the server's directory.");
  enum_prop(w, "approval-policy", "When the agent must ask before running commands.",
            {"untrusted", "on-failure", "on-request", "never"});
  enum_prop(w, "sandbox", "What commands may touch.", {"read-only", "workspace-write", "danger-full-access"});
  w.key("config").begin_object().field("type", "object").field("additionalProperties", true);
  w.field("description", "Settings overriding config.toml, as dotted keys (like `-c key=value`).").end_object();
  string_prop(w, "base-instructions", "System instructions replacing the built-in ones.");
  string_prop(w, "developer-instructions", "Instructions added as a developer message.");
  string_prop(w, "compact-prompt", "Prompt used when the conversation is compacted.");
  w.end_object();
  w.key("required").begin_array().string("prompt").end_array();
  w.end_object();
  output_schema(w);
  tool_traits(w);
  execution();
  w.end_object();

  w.begin_object().field("name", "llmx-reply").field("title", "LLMX Reply");
  w.field("description", "Continue an llmx conversation started by the llmx tool with the next user message.");
  w.key("inputSchema").begin_object().field("type", "object").key("properties").begin_object();
  string_prop(w, "conversationId", "The conversation id (threadId) returned by the llmx tool.");
  string_prop(w, "prompt", "The next user message.");
  w.end_object();
  w.key("required").begin_array().string("conversationId").string("prompt").end_array();
  w.end_object();
  output_schema(w);
  tool_traits(w);
  execution();
  w.end_object();

  w.end_array().end_object();
  
}

ConfigOverrides LlmxToolArgs::to_overrides() const {
  ConfigOverrides o{.model = model, .profile = profile, .cwd = cwd, .approval_policy = approval_policy,
                    .sandbox_mode = sandbox, .base_instructions = base_instructions,
                    .developer_instructions = developer_instructions, .compact_prompt = compact_prompt};
  if (config) o.json_overrides = api::dotted_overrides(*config);
  return o;
}

std::string busy_conversation(const std::string& conversation_id) {
  return fmt::format("Conversation {} is already running a turn; wait for it to finish or cancel it first.",
                     conversation_id);
}

namespace {
void related_task(json::Writer& w, const std::string& task_id) {
  if (!task_id.empty()) w.key(kRelatedTaskKey).begin_object().field("taskId", task_id).end_object();
}
}  // namespace

std::string event_params(const rpc::Id& request_id, const Event& ev, const std::string& task_id) {
  json::Writer w;
  write_event_params(w, request_id, ev, task_id);
  return w.take();
}

void write_event_params(json::Writer& w, const rpc::Id& request_id, const Event& ev, const std::string& task_id) {
  w.begin_object();
  w.plain_key("_meta").begin_object().plain_key("requestId").raw(request_id.json);
  related_task(w, task_id);
  w.end_object();
  w.plain_key("id").string(ev.id);
  w.plain_key("msg");
  json::write_value(w, ev.msg);
  w.end_object();
}

std::string progress_params(const RawJson& token, uint64_t progress, const std::string& message,
                            const std::string& task_id) {
  json::Writer w;
  w.begin_object();
  if (!task_id.empty()) {
    w.key("_meta").begin_object();
    related_task(w, task_id);
    w.end_object();
  }
  w.key("progressToken").raw(token.text);
  w.field("progress", progress);
  w.field("message", message);
  w.end_object();
  return w.take();
}

void write_json(json::Writer& w, const CallToolResult& x) {
  if (x.created_task) {
    w.begin_object().key("task").raw(*x.created_task).end_object();
    return;
  }
  w.begin_object();
  w.key("content").begin_array().begin_object().field("type", "text").field("text", x.text).end_object().end_array();
  if (x.thread_id)
    w.key("structuredContent").begin_object().field("threadId", *x.thread_id).field("content", x.text).end_object();
  if (x.is_error) w.field("isError", true);
  if (x.related_task)
    w.key("_meta").begin_object().key(kRelatedTaskKey).begin_object().field("taskId", *x.related_task).end_object().end_object();
  w.end_object();
}

namespace {
void decision_schema(json::Writer& w) {
  w.key("requestedSchema").begin_object().field("type", "object").key("properties").begin_object();
  w.key("decision").begin_object().field("type", "string").field("title", "Decision");
  w.field("description",
          "approved: run it once; approved_for_session: run it and allow the same again in this session; "
          "denied: do not run it, the agent continues; abort: stop the whole turn");
  w.key("enum").begin_array().string("approved").string("approved_for_session").string("denied").string("abort");
  w.end_array().end_object();
  w.end_object();
  w.key("required").begin_array().string("decision").end_array();
  w.end_object();
}

// Opens where our correlation data goes (`_meta` from 2025-11-25 on, else the params) and
// writes it; the caller adds its own llmx_* fields and calls end_tag.
void begin_tag(json::Writer& w, std::string_view kind, const ElicitationTag& tag, const std::string& call_id) {
  if (tag.in_meta) {
    w.field("mode", "form");
    w.key("_meta").begin_object();
    related_task(w, tag.task_id);
  }
  w.field("llmx_elicitation", kind);
  w.field("llmx_mcp_tool_call_id", tag.tool_call_id.as_plain_string());
  w.field("llmx_event_id", tag.event_id);
  w.field("llmx_call_id", call_id);
}

// Closes the params (and the `_meta` begin_tag opened).
void end_tag(json::Writer& w, const ElicitationTag& tag) {
  if (tag.in_meta) w.end_object();
  w.end_object();
}
}  // namespace

std::string exec_elicitation_params(const ExecApprovalRequestEvent& ev, const ElicitationTag& tag,
                                    const std::string& command_text) {
  json::Writer w;
  w.begin_object();
  std::string message = fmt::format("Allow LLMX to run `{}` in `{}`?", command_text, ev.cwd);
  if (ev.reason) message = *ev.reason + "\n" + message;
  w.field("message", message);
  decision_schema(w);
  begin_tag(w, "exec-approval", tag, ev.call_id);
  w.key("llmx_command");
  json::write_value(w, ev.command);
  w.field("llmx_cwd", ev.cwd);
  w.key("llmx_parsed_cmd");
  json::write_value(w, ev.parsed_cmd);
  if (ev.reason) w.field("llmx_reason", *ev.reason);
  end_tag(w, tag);
  return w.take();
}

std::string forwarded_elicitation_params(const ElicitationRequestEvent& ev, const ElicitationTag& tag) {
  json::Writer w;
  w.begin_object();
  w.field("message", fmt::format("The MCP server `{}` asks: {}", ev.server_name, ev.message));
  w.key("requestedSchema").raw(ev.requested_schema.text.empty() ? R"({"type":"object","properties":{}})"
                                                                  : ev.requested_schema.text);
  begin_tag(w, "mcp-elicitation", tag, ev.id);
  w.field("llmx_server_name", ev.server_name);
  end_tag(w, tag);
  return w.take();
}

std::string patch_elicitation_params(const ApplyPatchApprovalRequestEvent& ev, const ElicitationTag& tag) {
  json::Writer w;
  w.begin_object();
  std::string message = "Allow LLMX to apply proposed code changes?";
  if (ev.reason) message = *ev.reason + "\n" + message;
  w.field("message", message);
  decision_schema(w);
  begin_tag(w, "patch-approval", tag, ev.call_id);
  if (ev.reason) w.field("llmx_reason", *ev.reason);
  if (ev.grant_root) w.field("llmx_grant_root", *ev.grant_root);
  w.key("llmx_changes");
  json::write_value(w, ev.changes);
  end_tag(w, tag);
  return w.take();
}

ElicitationReply read_elicitation_reply(json::Element result) {
  ElicitationReply r;
  if (!result.is_object()) return r;
  auto o = result.get_object().value_unsafe();
  auto text = [](std::optional<json::Element> e) -> std::optional<std::string> {
    if (e && e->is_string()) return std::string(e->get_string().value_unsafe());
    return std::nullopt;
  };
  r.decision = text(json::get(o, "decision"));
  r.action = text(json::get(o, "action"));
  if (auto content = json::get(o, "content"); content && content->is_object()) {
    r.content_decision = text(json::get(content->get_object().value_unsafe(), "decision"));
    r.content = json::to_text(*content);
  }
  return r;
}

}  // namespace llmx::mcp
