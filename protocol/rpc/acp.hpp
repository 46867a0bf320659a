// The Agent Client Protocol (ACP v1, agentclientprotocol.com; issue 17): what `llmx acp` reads and
// writes, as plain code. Params are structs (decoded by the method table); a conversation's events
// become `session/update` notifications (AcpTurn), its approvals `session/request_permission`
// requests, and the end of a turn the prompt's stop reason. actors/acp_methods.cpp serves them.
#pragma once

#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "protocol/base/json_codec.hpp"
#include "protocol/core/event_msgs.hpp"
#include "protocol/core/events.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/model/model_catalog.hpp"
#include "protocol/rpc/method_table.hpp"
#include "protocol/rpc/notes.hpp"
#include "protocol/store/thread_store.hpp"

namespace llmx::acp {

inline constexpr int kProtocolVersion = 1;
// Error codes ACP adds to JSON-RPC's.
inline constexpr int kAuthRequired = -32000;
inline constexpr int kResourceNotFound = -32002;

struct InitializeParams {
  int64_t protocolVersion = kProtocolVersion;
  std::optional<RawJson> clientCapabilities;
  std::optional<RawJson> clientInfo;
  LLMX_FIELDS(v("protocolVersion", s.protocolVersion); v("clientCapabilities", s.clientCapabilities);
              v("clientInfo", s.clientInfo))
};

struct AuthenticateParams {
  std::string methodId;
  LLMX_FIELDS(v("methodId", s.methodId))
};

struct NewSessionParams {
  std::string cwd;
  std::optional<RawJson> mcpServers;
  LLMX_FIELDS(v("cwd", s.cwd); v("mcpServers", s.mcpServers))
};

struct PromptParams {
  std::string sessionId;
  RawJson prompt;  // ContentBlock[]
  LLMX_FIELDS(v("sessionId", s.sessionId); v("prompt", s.prompt))
};

struct LoadSessionParams {
  std::string sessionId;
  std::string cwd;
  std::optional<RawJson> mcpServers;
  LLMX_FIELDS(v("sessionId", s.sessionId); v("cwd", s.cwd); v("mcpServers", s.mcpServers))
};

struct ListSessionsParams {
  std::optional<std::string> cwd;
  std::optional<std::string> cursor;
  LLMX_FIELDS(v("cwd", s.cwd); v("cursor", s.cursor))
};

struct SessionIdParams {
  std::string sessionId;
  LLMX_FIELDS(v("sessionId", s.sessionId))
};

struct SetModeParams {
  std::string sessionId;
  std::string modeId;
  LLMX_FIELDS(v("sessionId", s.sessionId); v("modeId", s.modeId))
};

// session/set_config_option: a select takes a value id (a string); a boolean option (none here)
// would take a bool.
struct SetConfigOptionParams {
  std::string sessionId;
  std::string configId;
  RawJson value;
  LLMX_FIELDS(v("sessionId", s.sessionId); v("configId", s.configId); v("value", s.value))
};

// What the client declared it can do.
struct ClientCapabilities {
  bool read_text_file = false;
  bool write_text_file = false;
};
ClientCapabilities read_client_capabilities(const std::optional<RawJson>& capabilities);

// The params of the agent's fs/read_text_file and fs/write_text_file requests.
std::string read_text_file_params(const std::string& session_id, const std::string& path);
std::string write_text_file_params(const std::string& session_id, const std::string& path, const std::string& content);
// The text of an fs/read_text_file result (`{content}`); nullopt when it has none.
std::optional<std::string> read_text_file_content(json::Element result);

// initialize's result: version 1 whatever was asked (the client decides whether it can speak it).
std::string initialize_result();

// The approval presets a session can run in (`session/set_mode`).
struct Mode {
  std::string id, name, description;
  std::string approval_policy;  // config values
  std::string sandbox_mode;
};
const std::vector<Mode>& modes();
const Mode* find_mode(std::string_view id);
// The mode a session starts in is what the operator configured (command line, config.toml): the
// preset with that approval policy and sandbox, else this one, which keeps them.
inline constexpr std::string_view kConfiguredMode = "configured";
std::string mode_of(std::string_view approval_policy, std::string_view sandbox_mode);
// `{currentModeId, availableModes}` (the configured mode listed when no preset is it).
std::string mode_state(std::string_view current);
// The session's configuration options (`configOptions`): the model selector (category `model`),
// offering what the provider serves (`models`, the model/list entries) with `current` selected.
inline constexpr std::string_view kModelOption = "model";
std::string config_options(const std::vector<models::ModelPreset>& models, std::string_view current);
// session/new's result.
std::string new_session_result(const std::string& session_id, std::string_view mode, const std::string& options);
// session/load's result.
std::string load_session_result(std::string_view mode, const std::string& options);
// session/set_config_option's result: every option with its value now.
std::string set_config_option_result(const std::string& options);
// The model a select option's value names (a JSON string), or nullopt when it is not a string.
std::optional<std::string> select_value(const RawJson& value);
// session/list's result: a page of stored threads, titled by their name or else their preview.
std::string list_sessions_result(const threads::ListPage& page);
// -32002 for a session this agent does not have (`data.sessionId`, the SDK's convention).
rpc::RpcError session_not_found(const std::string& session_id);

// The client's MCP servers (session/new `mcpServers`: stdio `{name, command, args, env}` and
// `{type: "http", name, url, headers}`) as config overrides `mcp_servers.<name>`, so the session's
// MCP client starts them like configured ones; throws json::DecodeError on a malformed entry (or
// an `sse` one: not offered).
std::vector<std::pair<std::string, RawJson>> mcp_server_overrides(const std::optional<RawJson>& servers);

// The text of a prompt's content blocks (text, and resource links and embedded resources as
// their URI and text); throws json::DecodeError when it is not an array of blocks.
std::string prompt_text(const RawJson& blocks);

// One turn's events as `session/update` notifications (params JSON, in order, written in place).
class AcpTurn {
 public:
  explicit AcpTurn(std::string session_id) : session_id_(std::move(session_id)) {}
  void translate(const Event& ev, rpc::Notes& updates);
  // A stored event of an earlier turn (session/load): its messages whole, and its plans (the
  // stored events hold no tool call from its beginning, so none is shown).
  void replay(const Event& ev, rpc::Notes& updates);
  // A permission was asked for this call: it is open until it runs or the turn ends.
  void asked(const std::string& call_id) { open_.insert(call_id); }
  // At the turn's end: the tool calls it left open (cancelled, refused) end as failed.
  void close_open(rpc::Notes& updates);
  // The prompt's answer once the turn ended with this event (the updates closing it first): a
  // session/prompt result, or the error of a turn that failed.
  struct Answer {
    std::optional<std::string> result;  // `{stopReason}`
    std::optional<std::string> error;   // the turn's error message
  };
  std::optional<Answer> finish(const Event& ev, rpc::Notes& updates);
  // The stop reason once the turn ended with this event (end_turn, cancelled, max_tokens,
  // refusal); nullopt while it goes on. `error` is set when it failed.
  std::optional<std::string> stop_reason(const Event& ev);
  const std::optional<std::string>& error() const { return error_; }
  // A patch of this turn wrote this text through the editor (fs/write_text_file): its diff shows
  // that text, not the disk's (which the editor may not have saved).
  void wrote(const std::string& path, std::string text) { written_[path] = std::move(text); }

 private:
  std::string session_id_;
  // Files a running patch updates, with their unified diffs: its end shows each as old and new
  // text (the file as it is then, and the diff undone), which is what an editor renders. The
  // file cannot be read at the begin event: the patch may be applied by the time it arrives.
  std::map<std::string, std::map<std::string, FileChange>> edits_;
  std::set<std::string> open_;  // tool calls begun (or asked about) and not ended
  std::optional<std::string> error_;
  std::optional<std::string> cut_;  // max_tokens or refusal: the model did not finish its answer
  std::map<std::string, std::string> written_;  // texts written through the editor, by path
};

// The text a unified diff (`@@ -a,b +c,d @@` hunks) was made from, given the text it produced;
// nullopt when the diff does not fit that text.
std::optional<std::string> undo_unified_diff(std::string_view new_text, std::string_view diff);

// A stored session's history (SessionConfigured's recorded events) as session/update params,
// for session/load; throws json::DecodeError when the record cannot be read.
rpc::Notes replay_updates(const std::string& session_id, const RawJson& recorded);

// session/request_permission for an approval event (nullopt for other events).
struct Permission {
  std::string call_id;  // the approval's call
  bool patch = false;   // a patch (else a command)
  std::string params;   // the request's params
};
std::optional<Permission> permission_request(const std::string& session_id, const Event& ev);
// The decision a permission outcome means (no answer, or a malformed one, is denied).
ReviewDecision decision_of(const std::optional<json::Element>& result);

}  // namespace llmx::acp
