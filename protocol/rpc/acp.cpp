#include "protocol/rpc/acp.hpp"

#include <cstdio>
#include <filesystem>

#include "protocol/base/files.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/model/retry_policy.hpp"
#include "protocol/rpc/v2_events.hpp"

namespace llmx::acp {

namespace {

void text_block(json::Writer& w, std::string_view text) {
  w.begin_object().field("type", "text").field("text", text).end_object();
}

// A tool call's content entry that shows text.
void text_content(json::Writer& w, std::string_view text) {
  w.begin_object().field("type", "content").key("content");
  text_block(w, text);
  w.end_object();
}

// A session/update notification's params: `{sessionId, update: {sessionUpdate: kind, ...}}`,
// the update's other fields written by `fields`.
template <class Fields>
void add_update(rpc::Notes& out, const std::string& session_id, std::string_view kind, Fields&& fields) {
  json::Writer w(out.add("session/update"));
  w.begin_object().field("sessionId", session_id).key("update");
  w.begin_object().field("sessionUpdate", kind);
  fields(w);
  w.end_object().end_object();
}

// A message or thought chunk: its text as the update's content.
void add_chunk(rpc::Notes& out, const std::string& session_id, std::string_view kind, std::string_view text) {
  add_update(out, session_id, kind, [&](json::Writer& w) {
    w.key("content");
    text_block(w, text);
  });
}

// A command's kind for the editor: reading, searching, or running.
std::string_view command_kind(const std::vector<ParsedCommand>& parsed) {
  if (parsed.empty()) return "execute";
  bool read = true, search = true;
  for (const auto& p : parsed) {
    read = read && p.is<ParsedRead>();
    search = search && (p.is<ParsedSearch>() || p.is<ParsedListFiles>());
  }
  return read ? "read" : search ? "search" : "execute";
}

// The files a patch touches, as tool-call content (diffs) and locations. `applied`: the patch is
// done, so an updated file shows as old and new text (its unified diff otherwise).
// `written`: texts a patch wrote through the editor, which stand for the file's current text.
void patch_fields(json::Writer& w, const std::map<std::string, FileChange>& changes, bool applied = false,
                  const std::map<std::string, std::string>* written = nullptr) {
  w.key("content").begin_array();
  for (const auto& [path, change] : changes) {
    if (const auto* add = change.get_if<FileAdd>()) {
      w.begin_object().field("type", "diff").field("path", path).key("oldText").null().field("newText", add->content);
      w.end_object();
    } else if (const auto* update = change.get_if<FileUpdate>()) {
      const auto& target = update->move_path.value_or(path);
      std::optional<std::string> now, old;
      if (applied && written && written->count(target)) now = written->at(target);
      if (applied && (now || (now = files::read(target)))) old = undo_unified_diff(*now, update->unified_diff);
      if (old) {
        w.begin_object().field("type", "diff").field("path", target).field("oldText", *old).field("newText", *now).end_object();
      } else {
        text_content(w, update->unified_diff);
      }
    } else {
      text_content(w, "delete " + path);
    }
  }
  w.end_array();
  w.key("locations").begin_array();
  for (const auto& [path, _] : changes) w.begin_object().field("path", path).end_object();
  w.end_array();
}

std::string patch_title(const std::map<std::string, FileChange>& changes) {
  std::string names;
  for (const auto& [path, _] : changes)
    names += (names.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
  return "Edit " + names;
}

}  // namespace

ClientCapabilities read_client_capabilities(const std::optional<RawJson>& capabilities) {
  ClientCapabilities caps;
  if (!capabilities) return caps;
  try {
    json::Parser parser;
    auto root = parser.parse(capabilities->text);
    if (!root.is_object()) return caps;
    json::Object o = root.get_object().value_unsafe();
    if (auto fs = json::object_if(o, "fs")) {
      caps.read_text_file = json::get_bool(*fs, "readTextFile").value_or(false);
      caps.write_text_file = json::get_bool(*fs, "writeTextFile").value_or(false);
    }
  } catch (const std::exception&) {
  }
  return caps;
}

std::string initialize_result() {
  json::Writer w;
  w.begin_object().field("protocolVersion", static_cast<int64_t>(kProtocolVersion));
  w.key("agentCapabilities").begin_object().field("loadSession", true);
  w.key("sessionCapabilities").begin_object().key("list").begin_object().end_object().end_object();
  w.key("promptCapabilities").begin_object().field("image", false).field("audio", false).field("embeddedContext", true).end_object();
  w.key("mcpCapabilities").begin_object().field("http", true).field("sse", false).end_object();
  w.end_object();
  w.key("agentInfo").begin_object().field("name", "llmx").field("title", "LLMX").field("version", LLMX_VERSION).end_object();
  // The key llmx already reads (LLMX_API_KEY or the provider's variable): `authenticate` checks nothing more.
  w.key("authMethods").begin_array().begin_object().field("id", "api-key").field("name", "API key");
  w.field("description", "The model provider's API key from the agent's environment (LLMX_API_KEY)").end_object();
  w.end_array();
  w.end_object();
  return w.take();
}

std::string mode_of(std::string_view approval_policy, std::string_view sandbox_mode) {
  for (const auto& m : modes())
    if (m.approval_policy == approval_policy && m.sandbox_mode == sandbox_mode) return m.id;
  return std::string(kConfiguredMode);
}

const std::vector<Mode>& modes() {
  static const std::vector<Mode> all = {
      {"read-only", "Read only", "Reads files and runs read-only commands; asks before anything else", "on-request",
       "read-only"},
      {"auto", "Auto", "Edits files and runs commands in the workspace; asks before leaving it", "on-request",
       "workspace-write"},
      {"full-access", "Full access", "Runs anything without asking, outside the sandbox", "never",
       "danger-full-access"},
  };
  return all;
}

const Mode* find_mode(std::string_view id) {
  for (const auto& m : modes())
    if (m.id == id) return &m;
  return nullptr;
}

std::string mode_state(std::string_view current) {
  json::Writer w;
  w.begin_object().field("currentModeId", current).key("availableModes").begin_array();
  if (current == kConfiguredMode)
    w.begin_object().field("id", kConfiguredMode).field("name", "As configured")
        .field("description", "The approval policy and sandbox llmx was started with").end_object();
  for (const auto& m : modes())
    w.begin_object().field("id", m.id).field("name", m.name).field("description", m.description).end_object();
  w.end_array().end_object();
  return w.take();
}

std::string config_options(const std::vector<models::ModelPreset>& models, std::string_view current) {
  json::Writer w;
  w.begin_array().begin_object().field("id", kModelOption).field("name", "Model");
  w.field("description", "The model the agent's next turns use, from what the provider serves");
  w.field("category", "model").field("type", "select").field("currentValue", current);
  w.key("options").begin_array();
  bool listed = false;
  for (const auto& m : models) {
    listed |= m.model == current;
    w.begin_object().field("value", m.model).field("name", m.display_name).field("description", m.description).end_object();
  }
  if (!listed) w.begin_object().field("value", current).field("name", current).end_object();
  w.end_array().end_object().end_array();
  return w.take();
}

std::string new_session_result(const std::string& session_id, std::string_view mode, const std::string& options) {
  json::Writer w;
  w.begin_object().field("sessionId", session_id).key("modes").raw(mode_state(mode));
  w.key("configOptions").raw(options).end_object();
  return w.take();
}

std::string set_config_option_result(const std::string& options) {
  json::Writer w;
  w.begin_object().key("configOptions").raw(options).end_object();
  return w.take();
}

std::optional<std::string> select_value(const RawJson& value) {
  try {
    json::Parser parser;
    auto e = parser.parse(value.text);
    if (!e.is_string()) return std::nullopt;
    return std::string(e.get_string().value_unsafe());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::pair<std::string, RawJson>> mcp_server_overrides(const std::optional<RawJson>& servers) {
  std::vector<std::pair<std::string, RawJson>> out;
  if (!servers) return out;
  json::Parser parser;
  auto root = parser.parse(servers->text);
  if (!root.is_array()) throw json::DecodeError("must be an array", "mcpServers");
  json::Array array = root.get_array().value_unsafe();
  size_t i = 0;
  for (auto entry : array) {
    auto where = "mcpServers." + std::to_string(i++);
    if (!entry.is_object()) throw json::DecodeError("must be an object", where);
    json::Object e = entry.get_object().value_unsafe();
    auto name = std::string(json::string_if(e, "name").value_or(""));
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos)
      throw json::DecodeError("a name of letters, digits, `_` and `-` is required", where + ".name");
    // `[{name, value}]` -> `{name: value}`.
    auto pairs = [&](std::string_view key, json::Writer& w) {
      w.begin_object();
      if (auto list = json::get(e, key); list && list->is_array()) {
        json::Array items = list->get_array().value_unsafe();
        for (auto item : items) {
          if (!item.is_object()) throw json::DecodeError("must be {name, value} objects", where + "." + std::string(key));
          json::Object kv = item.get_object().value_unsafe();
          w.field(json::string_if(kv, "name").value_or(""), json::string_if(kv, "value").value_or(""));
        }
      }
      w.end_object();
    };
    json::Writer w;
    auto type = json::string_if(e, "type").value_or("stdio");
    if (type == "http") {
      auto url = json::string_if(e, "url");
      if (!url) throw json::DecodeError("is required", where + ".url");
      w.begin_object().field("url", *url).key("http_headers");
      pairs("headers", w);
      w.end_object();
    } else if (type == "stdio") {
      auto command = json::string_if(e, "command");
      if (!command) throw json::DecodeError("is required", where + ".command");
      w.begin_object().field("command", *command).key("args").begin_array();
      if (auto args = json::get(e, "args"); args && args->is_array()) {
        json::Array items = args->get_array().value_unsafe();
        for (auto a : items)
          if (a.is_string()) w.string(a.get_string().value_unsafe());
      }
      w.end_array().key("env");
      pairs("env", w);
      w.end_object();
    } else {
      throw json::DecodeError("`" + std::string(type) + "` servers are not offered (stdio and http are)", where + ".type");
    }
    out.emplace_back("mcp_servers." + name, RawJson{w.take()});
  }
  return out;
}

std::string load_session_result(std::string_view mode, const std::string& options) {
  json::Writer w;
  w.begin_object().key("modes").raw(mode_state(mode)).key("configOptions").raw(options).end_object();
  return w.take();
}

std::string list_sessions_result(const threads::ListPage& page) {
  json::Writer w;
  w.begin_object().key("sessions").begin_array();
  for (const auto& t : page.items) {
    w.begin_object().field("sessionId", t.id).field("cwd", t.cwd).field("title", t.name.value_or(t.preview));
    w.field("updatedAt", t.updated_at).end_object();
  }
  w.end_array();
  if (page.next_cursor) w.field("nextCursor", *page.next_cursor);
  w.end_object();
  return w.take();
}

rpc::RpcError session_not_found(const std::string& session_id) {
  json::Writer w;
  w.begin_object().field("sessionId", session_id).end_object();
  return rpc::RpcError{kResourceNotFound, "Resource not found: session " + session_id, w.take()};
}

std::string prompt_text(const RawJson& blocks) {
  json::Parser parser;
  auto root = parser.parse(blocks.text);
  if (!root.is_array()) throw json::DecodeError("must be an array of content blocks", "prompt");
  std::string out;
  auto add = [&](std::string_view piece) {
    if (!out.empty()) out += "\n";
    out += piece;
  };
  json::Array array = root.get_array().value_unsafe();  // named: a temporary's range would dangle
  for (auto block : array) {
    if (!block.is_object()) throw json::DecodeError("a content block is an object", "prompt");
    json::Object b = block.get_object().value_unsafe();
    auto type = json::string_if(b, "type").value_or("");
    if (type == "text") {
      add(json::string_if(b, "text").value_or(""));
    } else if (type == "resource_link") {
      add(std::string("[") + std::string(json::string_if(b, "name").value_or("")) + "](" +
          std::string(json::string_if(b, "uri").value_or("")) + ")");
    } else if (type == "resource") {
      if (auto r = json::object_if(b, "resource")) {
        auto uri = std::string(json::string_if(*r, "uri").value_or(""));
        if (auto text = json::string_if(*r, "text")) add("<context uri=\"" + uri + "\">\n" + std::string(*text) + "\n</context>");
        else add("[" + uri + "]");
      }
    } else {
      throw json::DecodeError("content blocks of type `" + std::string(type) + "` are not accepted", "prompt");
    }
  }
  return out;
}

void AcpTurn::translate(const Event& ev, rpc::Notes& out) {
  const auto& m = ev.msg;
  auto update = [&](std::string_view kind, auto&& fields) { add_update(out, session_id_, kind, fields); };
  if (const auto* d = m.get_if<AgentMessageDeltaEvent>()) {
    add_chunk(out, session_id_, "agent_message_chunk", d->delta);
  } else if (const auto* r = m.get_if<AgentReasoningDeltaEvent>()) {
    add_chunk(out, session_id_, "agent_thought_chunk", r->delta);
  } else if (const auto* b = m.get_if<ExecCommandBeginEvent>()) {
    open_.insert(b->call_id);
    update("tool_call", [&](json::Writer& w) {
      w.field("toolCallId", b->call_id).field("title", v2::join_command(b->command));
      w.field("kind", command_kind(b->parsed_cmd)).field("status", "in_progress");
      w.key("rawInput").begin_object().key("command").begin_array();
      for (const auto& a : b->command) w.string(a);
      w.end_array().field("cwd", b->cwd).end_object();
    });
  } else if (const auto* e = m.get_if<ExecCommandEndEvent>()) {
    open_.erase(e->call_id);
    update("tool_call_update", [&](json::Writer& w) {
      w.field("toolCallId", e->call_id).field("status", e->exit_code == 0 ? "completed" : "failed");
      const auto& text = e->aggregated_output.empty() ? e->stdout_text + e->stderr_text : e->aggregated_output;
      w.key("content").begin_array();
      if (!text.empty()) text_content(w, text);
      w.end_array();
      w.key("rawOutput").begin_object().field("exitCode", e->exit_code).end_object();
    });
  } else if (const auto* p = m.get_if<PatchApplyBeginEvent>()) {
    edits_[p->call_id] = p->changes;
    open_.insert(p->call_id);
    update("tool_call", [&](json::Writer& w) {
      w.field("toolCallId", p->call_id).field("title", patch_title(p->changes)).field("kind", "edit");
      w.field("status", "in_progress");
      patch_fields(w, p->changes);
    });
  } else if (const auto* pe = m.get_if<PatchApplyEndEvent>()) {
    open_.erase(pe->call_id);
    update("tool_call_update", [&](json::Writer& w) {
      w.field("toolCallId", pe->call_id).field("status", pe->success ? "completed" : "failed");
      if (auto it = edits_.find(pe->call_id); it != edits_.end()) {
        // The whole list again (an update replaces it), updated files now as old and new text.
        if (pe->success) patch_fields(w, it->second, true, &written_);
        edits_.erase(it);
      }
    });
  } else if (const auto* plan = m.get_if<PlanUpdateEvent>()) {
    update("plan", [&](json::Writer& w) {
      w.key("entries").begin_array();
      for (const auto& item : plan->plan)
        w.begin_object().field("content", item.step).field("priority", "medium")
            .field("status", enum_name(item.status)).end_object();
      w.end_array();
    });
  } else if (const auto* mb = m.get_if<McpToolCallBeginEvent>()) {
    open_.insert(mb->call_id);
    update("tool_call", [&](json::Writer& w) {
      w.field("toolCallId", mb->call_id).field("title", mb->invocation.server + "." + mb->invocation.tool);
      w.field("kind", "other").field("status", "in_progress");
      if (mb->invocation.arguments) w.key("rawInput").raw(mb->invocation.arguments->text);
    });
  } else if (const auto* me = m.get_if<McpToolCallEndEvent>()) {
    open_.erase(me->call_id);
    update("tool_call_update", [&](json::Writer& w) {
      bool ok = me->result.text.find("\"Err\"") == std::string::npos && me->result.text.find("\"isError\":true") == std::string::npos;
      w.field("toolCallId", me->call_id).field("status", ok ? "completed" : "failed");
    });
  }
}

void AcpTurn::replay(const Event& ev, rpc::Notes& out) {
  if (const auto* u = ev.msg.get_if<UserMessageEvent>()) return add_chunk(out, session_id_, "user_message_chunk", u->message);
  if (const auto* a = ev.msg.get_if<AgentMessageEvent>()) return add_chunk(out, session_id_, "agent_message_chunk", a->message);
  if (const auto* r = ev.msg.get_if<AgentReasoningEvent>()) return add_chunk(out, session_id_, "agent_thought_chunk", r->text);
  if (ev.msg.is<PlanUpdateEvent>()) translate(ev, out);
}

void AcpTurn::close_open(rpc::Notes& out) {
  for (const auto& id : open_)
    add_update(out, session_id_, "tool_call_update",
               [&](json::Writer& w) { w.field("toolCallId", id).field("status", "failed"); });
  open_.clear();
}

std::optional<AcpTurn::Answer> AcpTurn::finish(const Event& ev, rpc::Notes& out) {
  auto stop = stop_reason(ev);
  if (!stop) return std::nullopt;
  close_open(out);
  if (*stop == "end_turn" && error_) return Answer{std::nullopt, error_};
  json::Writer w;
  w.begin_object().field("stopReason", *stop).end_object();
  return Answer{w.take(), std::nullopt};
}

std::optional<std::string> AcpTurn::stop_reason(const Event& ev) {
  const auto& m = ev.msg;
  if (const auto* e = m.get_if<ErrorEvent>()) {
    error_ = e->message;
    return std::nullopt;
  }
  if (const auto* w = m.get_if<WarningEvent>()) {
    if (w->message == kOutputLimitWarning) cut_ = "max_tokens";
    if (w->message == kContentFilterWarning) cut_ = "refusal";
    return std::nullopt;
  }
  if (m.is<TurnAbortedEvent>()) return "cancelled";
  if (m.is<TaskCompleteEvent>()) {
    // A conversation too long for the model even after compaction is out of tokens too.
    if (error_ && retry::is_context_window_error(*error_)) {
      error_.reset();
      return "max_tokens";
    }
    return cut_.value_or("end_turn");
  }
  return std::nullopt;
}

std::optional<std::string> undo_unified_diff(std::string_view new_text, std::string_view diff) {
  // The new text's lines, each with its newline.
  std::vector<std::string> lines;
  for (size_t start = 0; start < new_text.size();) {
    auto end = new_text.find('\n', start);
    end = end == std::string_view::npos ? new_text.size() : end + 1;
    lines.emplace_back(new_text.substr(start, end - start));
    start = end;
  }
  struct Hunk {
    size_t new_start = 0, new_count = 0;
    std::vector<std::string> old_side;
  };
  std::vector<Hunk> hunks;
  bool last_old = false;  // the line before a "\ No newline" marker was of the old side
  for (size_t start = 0; start < diff.size();) {
    auto end = diff.find('\n', start);
    if (end == std::string_view::npos) end = diff.size();
    std::string_view line = diff.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("@@")) {
      unsigned a = 0, b = 1, c = 0, d = 1;
      std::string header(line);
      if (std::sscanf(header.c_str(), "@@ -%u,%u +%u,%u @@", &a, &b, &c, &d) < 4 &&
          std::sscanf(header.c_str(), "@@ -%u +%u,%u @@", &a, &c, &d) < 3 &&
          std::sscanf(header.c_str(), "@@ -%u,%u +%u @@", &a, &b, &c) < 3 &&
          std::sscanf(header.c_str(), "@@ -%u +%u @@", &a, &c) < 2)
        return std::nullopt;
      hunks.push_back({d == 0 ? c : c - 1, d, {}});
    } else if (!hunks.empty() && !line.empty() && (line[0] == ' ' || line[0] == '-')) {
      hunks.back().old_side.push_back(std::string(line.substr(1)) + "\n");
      last_old = true;
    } else if (!hunks.empty() && !line.empty() && line[0] == '+') {
      last_old = false;
    } else if (!hunks.empty() && line.starts_with("\\") && last_old && !hunks.back().old_side.empty()) {
      hunks.back().old_side.back().pop_back();  // "\ No newline at end of file" after an old line
    }
  }
  if (hunks.empty()) return std::nullopt;
  for (auto it = hunks.rbegin(); it != hunks.rend(); ++it) {  // last first: earlier positions stay put
    if (it->new_start + it->new_count > lines.size()) return std::nullopt;
    lines.erase(lines.begin() + it->new_start, lines.begin() + it->new_start + it->new_count);
    lines.insert(lines.begin() + it->new_start, it->old_side.begin(), it->old_side.end());
  }
  std::string out;
  for (auto& l : lines) out += l;
  return out;
}

rpc::Notes replay_updates(const std::string& session_id, const RawJson& recorded) {
  AcpTurn turn(session_id);
  rpc::Notes updates;
  for (auto& msg : json::parse_as<std::vector<EventMsg>>(recorded.text)) turn.replay(Event{"", std::move(msg)}, updates);
  return updates;
}

std::optional<Permission> permission_request(const std::string& session_id, const Event& ev) {
  // Asked of every event: the others (a streamed delta) cost nothing here.
  if (!ev.msg.is<ExecApprovalRequestEvent>() && !ev.msg.is<ApplyPatchApprovalRequestEvent>()) return std::nullopt;
  Permission out;
  json::Writer w;
  w.begin_object().field("sessionId", session_id).key("toolCall").begin_object();
  if (const auto* x = ev.msg.get_if<ExecApprovalRequestEvent>()) {
    out.call_id = x->call_id;
    w.field("toolCallId", x->call_id).field("title", v2::join_command(x->command)).field("kind", "execute");
    w.field("status", "pending").key("rawInput").begin_object().key("command").begin_array();
    for (const auto& a : x->command) w.string(a);
    w.end_array().field("cwd", x->cwd);
    if (x->reason) w.field("reason", *x->reason);
    w.end_object();
  } else if (const auto* p = ev.msg.get_if<ApplyPatchApprovalRequestEvent>()) {
    out.call_id = p->call_id;
    out.patch = true;
    w.field("toolCallId", p->call_id).field("title", patch_title(p->changes)).field("kind", "edit").field("status", "pending");
    patch_fields(w, p->changes);
  }
  w.end_object();
  w.key("options").begin_array();
  for (auto [id, name] : {std::pair{"allow_once", "Allow"}, std::pair{"allow_always", "Allow for this session"},
                          std::pair{"reject_once", "Reject"}, std::pair{"reject_always", "Reject and stop"}})
    w.begin_object().field("optionId", id).field("name", name).field("kind", id).end_object();
  w.end_array().end_object();
  out.params = w.take();
  return out;
}

ReviewDecision decision_of(const std::optional<json::Element>& result) {
  if (!result || !result->is_object()) return ReviewDecision::denied;
  auto outcome = json::object_if(result->get_object().value_unsafe(), "outcome");
  if (!outcome) return ReviewDecision::denied;
  auto kind = json::string_if(*outcome, "outcome").value_or("");
  if (kind == "cancelled") return ReviewDecision::abort;
  auto option = json::string_if(*outcome, "optionId").value_or("");
  if (option == "allow_once") return ReviewDecision::approved;
  if (option == "allow_always") return ReviewDecision::approved_for_session;
  if (option == "reject_always") return ReviewDecision::abort;  // no, and stop the turn
  return ReviewDecision::denied;
}

std::string read_text_file_params(const std::string& session_id, const std::string& path) {
  json::Writer w;
  w.begin_object().field("sessionId", session_id).field("path", path).end_object();
  return w.take();
}

std::string write_text_file_params(const std::string& session_id, const std::string& path, const std::string& content) {
  json::Writer w;
  w.begin_object().field("sessionId", session_id).field("path", path).field("content", content).end_object();
  return w.take();
}

std::optional<std::string> read_text_file_content(json::Element result) {
  std::string_view content;
  if (!result.is_object() || result["content"].get_string().get(content) != simdjson::SUCCESS) return std::nullopt;
  return std::string(content);
}

}  // namespace llmx::acp
