#include "protocol/workspace/git_diff.hpp"

#include "protocol/base/text.hpp"

namespace llmx::workspace {

namespace {

constexpr std::chrono::seconds kGitTimeout{30};

CommandOutput git(const CommandRunner& run, const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  static const std::map<std::string, std::string> env = {{"GIT_TERMINAL_PROMPT", "0"}, {"GIT_OPTIONAL_LOCKS", "0"}};
  return run(argv, env, kGitTimeout);
}

bool ok(const CommandOutput& r) { return r.failure.empty() && r.exit_code == 0; }

}  // namespace

std::optional<GitDiff> git_diff_to_remote(const std::string& cwd, const CommandRunner& run) {
  auto top = git(run, cwd, {"rev-parse", "--show-toplevel"});
  if (!ok(top)) return std::nullopt;
  std::string root = text::trim(top.out);
  if (root.empty()) return std::nullopt;

  GitDiff result;
  for (const char* base : {"@{upstream}", "origin/HEAD", "origin/main", "origin/master"}) {
    auto mb = git(run, root, {"merge-base", "HEAD", base});
    if (ok(mb) && !text::trim(mb.out).empty()) {
      result.sha = text::trim(mb.out);
      break;
    }
  }
  if (result.sha.empty()) {
    auto head = git(run, root, {"rev-parse", "--verify", "--quiet", "HEAD"});
    if (!ok(head) || text::trim(head.out).empty()) return std::nullopt;  // no commit at all
    result.sha = text::trim(head.out);
  }

  auto tracked = git(run, root, {"diff", "--no-color", "--no-textconv", "--no-ext-diff", result.sha});
  if (!ok(tracked)) return std::nullopt;
  result.diff = std::move(tracked.out);

  auto others = git(run, root, {"ls-files", "--others", "--exclude-standard", "-z"});
  if (!ok(others)) return std::nullopt;
  std::string_view rest = others.out;
  while (!rest.empty()) {
    auto end = rest.find('\0');
    std::string file(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (file.empty()) continue;
    // Exit status 1 means "there are differences", which a new file always has.
    auto added = git(run, root, {"diff", "--no-color", "--no-textconv", "--no-ext-diff", "--binary", "--no-index", "--",
                            "/dev/null", file});
    if (!added.failure.empty() || (added.exit_code != 0 && added.exit_code != 1)) return std::nullopt;
    result.diff += added.out;
  }
  return result;
}

}  // namespace llmx::workspace
