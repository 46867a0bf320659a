// The event stream of `llmx exec --json` (issue 14): the contract the Codex SDK reads, one JSON
// object per line — thread.started, turn.started, item.started|updated|completed,
// turn.completed {usage}, turn.failed {error}, error — with items agent_message, reasoning,
// command_execution, file_change, mcp_tool_call, todo_list and error, in the reference's field
// names (codex `exec/src/exec_events.rs`). Plain code: core events in, lines out.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/base/schema_gen.hpp"
#include "protocol/core/event_msgs.hpp"

namespace llmx::exec_events {

class Translator {
 public:
  // The lines one core event becomes (none for most deltas and bookkeeping events).
  void translate(const Event& ev, std::vector<std::string>& out);

 private:
  std::string next_id();
  std::string item_line(std::string_view type, std::string_view item_json);
  // Items still running when the turn ends (an interrupt kills them without an end event) are
  // completed as failed, so no item.started is left without its item.completed.
  void finish_running(std::vector<std::string>& out);

  uint64_t next_item_ = 0;
  struct Running {
    std::string id;
    enum class Kind { command, patch, mcp } kind = Kind::command;
    std::string command;  // command_execution
    std::string changes;  // file_change: the changes array as JSON
    std::optional<McpInvocation> invocation;
  };
  std::map<std::string, Running> running_;  // by call id
  std::optional<std::string> todo_id_;      // the turn's todo_list item, once there is a plan
  std::string todo_items_;                  // its items as JSON
  std::optional<std::string> error_;        // the turn failed with this
  TokenUsage usage_;                        // the turn's tokens so far
};

// The JSON Schema of one line (exported as ExecThreadEvent with the other schemas).
schema::Node json_schema();

}  // namespace llmx::exec_events
