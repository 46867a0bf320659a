// The MCP task board (actors.hpp: mcp_task_board_actor): one per MCP server, it runs the turns
// of tool calls made as tasks and keeps their outcome for polling. The task logic is plain code
// (protocol/rpc/mcp_tasks.hpp, actors/tool_calls.hpp); the board feeds it events and timers.
#pragma once

#include "actors/actors.hpp"
#include "protocol/rpc/mcp_tasks.hpp"

namespace llmx {

mcp_task_board_actor spawn_mcp_task_board(caf::actor_system& sys, mcp::TaskBook::Limits limits = {});

}  // namespace llmx
