// Turns a thread's core events into the v2 notifications of DECISIONS P9: item/started,
// item/completed, item/agentMessage/delta, item/commandExecution/outputDelta, turn/completed
// (status completed / interrupted / failed). Plain code, one instance per thread and listener.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/core/event_msgs.hpp"
#include "protocol/rpc/notes.hpp"

namespace llmx::v2 {

class EventTranslator {
 public:
  void translate(const Event& ev, rpc::Notes& out);

 private:
  struct RunningCommand {
    std::string command;
    std::string output;  // aggregated as it streams (head kept for item/completed)
  };
  std::map<std::string, RunningCommand> commands_;  // by call id
  std::optional<std::string> error_;               // the running turn failed with this
  TokenUsage last_usage_;
};

// Thread items (§4.4) as JSON text: agentMessage or reasoning (`type`) with its text, and an
// mcpToolCall (`end` null while it runs).
std::string text_item(std::string_view type, const std::string& id, const std::string& text);
std::string mcp_item(const std::string& id, const McpInvocation& inv, const McpToolCallEndEvent* end);

// The display form of an argv (`bash -lc 'echo hi'`), for commandExecution items.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace llmx::v2
