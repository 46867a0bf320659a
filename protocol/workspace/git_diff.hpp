// gitDiffToRemote's plain logic: which git commands to run and how their output becomes the
// diff. The commands run through a CommandRunner the caller supplies (in the server: the
// sandbox's process loop, sandbox/run_command.hpp), so every child llmx starts goes through one
// place.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/base/reflect.hpp"

namespace llmx::workspace {

// The commit the local work is compared against and the diff from it (the wire result as is).
struct GitDiff {
  std::string sha;
  std::string diff;
  LLMX_FIELDS(v("sha", s.sha); v("diff", s.diff))
};

// A finished child process.
struct CommandOutput {
  int exit_code = -1;
  std::string out, err;
  std::string failure;  // non-empty: it could not run, timed out or said too much
};

// Runs argv (looked up on PATH) with the server's environment plus `extra_env`, stdin at
// /dev/null, capturing stdout and stderr, and waits for its end.
using CommandRunner = std::function<CommandOutput(const std::vector<std::string>& argv,
                                                  const std::map<std::string, std::string>& extra_env,
                                                  std::chrono::milliseconds timeout)>;

// The commit is the merge base of HEAD with its upstream, else with the remote's default branch
// (origin/HEAD, origin/main, origin/master), else HEAD itself; the diff holds the tracked changes,
// then every untracked, not ignored file as an added file. nullopt when `cwd` is not inside a
// work tree with a commit or git cannot be run. Blocking: runs git several times.
std::optional<GitDiff> git_diff_to_remote(const std::string& cwd, const CommandRunner& run);

}  // namespace llmx::workspace
