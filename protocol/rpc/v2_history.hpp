// A stored thread as the v2 wire shows it: the Thread of a store summary, and the turns and title
// rebuilt from its rollout (thread/read, thread/fork, thread/rollback). Plain code.
//
// Turns: a turn_context line opens one (a legacy file's user message opens one when none is
// open); user messages, agent messages, reasoning and MCP tool calls become its items (commands
// and patches are not in the rollout, engine.md §9.3); turn_aborted marks it interrupted; a
// thread_rolled_back line drops the last turns. Stored turns get positional ids `turn-N` (the
// live ids are submission ids, which restart with every resume) and items `item-N`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/rpc/v2_api.hpp"
#include "protocol/store/thread_store.hpp"

namespace llmx::v2 {

// `default_provider` stands in for a thread whose session_meta names none.
Thread thread_of(const threads::ThreadSummary& summary, const std::string& default_provider);

struct StoredHistory {
  std::vector<Turn> turns;
  std::optional<std::string> name;  // the last thread_name_updated
};
StoredHistory history_of(std::string_view rollout_text);

// The v2 spelling of a stored session source ("mcp" is "appServer"; objects stay as they are).
RawJson source_of(const std::string& stored_source);

}  // namespace llmx::v2
