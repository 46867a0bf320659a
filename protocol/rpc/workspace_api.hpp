// Params and results of the workspace methods both servers serve (protocol.md §3.6, DECISIONS
// P1): gitDiffToRemote, execOneOffCommand, fuzzyFileSearch. The plain code behind them is in
// protocol/workspace/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/base/reflect.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/workspace/file_search.hpp"
#include "protocol/workspace/git_diff.hpp"

namespace llmx::api {

// --- gitDiffToRemote --------------------------------------------------------------------------------

struct GitDiffToRemoteParams {
  std::string cwd;
  LLMX_FIELDS(v("cwd", s.cwd))
};

using GitDiffToRemoteResult = workspace::GitDiff;

// --- execOneOffCommand ------------------------------------------------------------------------------

struct ExecOneOffCommandParams {
  std::vector<std::string> command;
  Nullable<int64_t> timeoutMs;
  Nullable<std::string> cwd;
  Nullable<SandboxPolicy> sandboxPolicy;
  LLMX_FIELDS(v("command", s.command); v("timeoutMs", s.timeoutMs); v("cwd", s.cwd);
              v("sandboxPolicy", s.sandboxPolicy))
};

struct ExecOneOffCommandResult {
  int64_t exitCode = 0;
  std::string out, err;
  LLMX_FIELDS(v("exitCode", s.exitCode); v("stdout", s.out); v("stderr", s.err))
};

// The default when `timeoutMs` is not given (the reference's exec default).
inline constexpr int64_t kOneOffTimeoutMs = 10000;

// --- fuzzyFileSearch --------------------------------------------------------------------------------

struct FuzzyFileSearchParams {
  std::string query;
  std::vector<std::string> roots;
  Nullable<std::string> cancellationToken;
  LLMX_FIELDS(v("query", s.query); v("roots", s.roots); v("cancellationToken", s.cancellationToken))
};

struct FuzzyFileSearchResult {
  std::vector<workspace::FuzzyFileMatch> files;
  LLMX_FIELDS(v("files", s.files))
};

}  // namespace llmx::api
