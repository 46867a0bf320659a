// Plain helpers of the v2 thread methods: settings from params, the result of an opened thread,
// a thread's live status, and the page of loaded thread ids.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/config/config.hpp"
#include "protocol/rpc/v2_api.hpp"

namespace llmx::v2 {

// thread/start's (and thread/fork's) settings as config overrides.
ConfigOverrides start_overrides(const ThreadStartParams& p);

// The settings part of a thread/start, resume or fork result (the thread is filled by the caller).
ThreadOpenedResult opened_result(const Config& cfg);

// A thread that starts now (thread/start): no turns, idle.
Thread new_thread(const std::string& id, const Config& cfg, const std::string& rollout_path, int64_t now_unix);

// A loaded thread's status: idle, or active when `running_turn` is not empty; then its last turn
// is the running one (in progress, with its live id).
void mark_running(Thread& t, const std::string& running_turn);

// thread/loaded/list: ids sorted as strings, the page after `cursor` (which need not be loaded
// any more), at most `limit` (all when absent; at least 1).
ThreadLoadedListResult loaded_page(std::vector<std::string> ids, const Nullable<std::string>& cursor,
                                   const Nullable<int64_t>& limit);

}  // namespace llmx::v2
