// Git facts for a session's `session_meta.git` (engine.md §9.1), read from the repository's
// files instead of running git: no process, no 5 s timeouts, nothing to wait for when a session
// starts.
#pragma once

#include <optional>
#include <string>

#include "protocol/store/rollout.hpp"

namespace llmx {

// Walks up from `cwd` to the first `.git` (a directory, or a `gitdir: <path>` file as worktrees
// and submodules have). nullopt outside a repository. Otherwise each field is set when known:
//  * branch: from HEAD's `ref: refs/heads/<branch>`, omitted when HEAD is detached;
//  * commit_hash: the ref's loose file or packed-refs entry (HEAD itself when detached), omitted
//    on an unborn branch;
//  * repository_url: `url` of the `[remote "origin"]` section of the config.
// Linked worktrees read refs, packed-refs and config from the common dir named by `commondir`.
std::optional<rollout::GitInfo> read_git_info(const std::string& cwd);

// Whether `cwd` lies in a git repository (the same walk: a `.git` with a HEAD).
bool inside_git_repository(const std::string& cwd);

}  // namespace llmx
