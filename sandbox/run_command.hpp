// Runs one command to its end and waits for it, through the shared process loop every child of
// llmx goes through (own process group, parent-death signal, killed on timeout): the runner the
// blocking helpers (git for gitDiffToRemote) use from detached actors.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "protocol/workspace/git_diff.hpp"

namespace llmx::sandbox {

// argv[0] is looked up on PATH; the environment is the server's (secrets sealed at start-up
// stay out) plus `extra_env`; stdin is /dev/null. Fails, with the reason in `failure`, when the
// program cannot run, after `timeout`, or once its output passes `max_bytes`.
workspace::CommandOutput run_command(const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& extra_env,
                                     std::chrono::milliseconds timeout, size_t max_bytes = 256u << 20);

}  // namespace llmx::sandbox
