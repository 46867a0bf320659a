// Child processes with a timeout and gitDiffToRemote (declared in account_api.hpp).
#include "protocol/account_api.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "protocol/config_reader.hpp"
#include "protocol/ids.hpp"
#include "protocol/json_codec.hpp"
#include "protocol/rollout.hpp"
#include "protocol/text.hpp"

extern char** environ;

namespace llmx::api {

namespace fs = std::filesystem;

// --- child processes and git ----------------------------------------------------------------------

namespace {

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// The whole group of a child we started (it leads its own process group).
void kill_group(pid_t pid) {
  if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
}

}  // namespace

CommandOutput run_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                          std::chrono::milliseconds timeout, size_t max_bytes) {
  CommandOutput r;
  if (argv.empty()) {
    r.failure = "empty command";
    return r;
  }
  int out_p[2], err_p[2];
  if (::pipe2(out_p, O_CLOEXEC) != 0) {
    r.failure = fmt::format("pipe: {}", std::strerror(errno));
    return r;
  }
  Fd out_r(out_p[0]), out_w(out_p[1]);
  if (::pipe2(err_p, O_CLOEXEC) != 0) {
    r.failure = fmt::format("pipe: {}", std::strerror(errno));
    return r;
  }
  Fd err_r(err_p[0]), err_w(err_p[1]);

  // Environment: ours, with extra_env replacing or adding variables.
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (!extra_env.count(std::string(kv.substr(0, kv.find('='))))) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : extra_env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_w.fd, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);  // the server ignores SIGPIPE; git must not
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  out_w.reset();
  err_w.reset();
  if (rc != 0) {
    r.failure = fmt::format("failed to run `{}`: {}", argv[0], std::strerror(rc));
    return r;
  }

  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill_group(pid);
      r.failure = fmt::format("`{}` timed out after {} ms", argv[0], timeout.count());
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
    if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
    int pr = ::poll(fds, n, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
    if (pr < 0) {
      if (errno == EINTR) continue;
      kill_group(pid);
      r.failure = fmt::format("poll: {}", std::strerror(errno));
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      bool is_out = fds[i].fd == out_r.fd;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        (is_out ? out_r : err_r).reset();
        continue;
      }
      (is_out ? r.out : r.err).append(buf, static_cast<size_t>(got));
    }
    if (r.out.size() + r.err.size() > max_bytes) {
      kill_group(pid);
      r.failure = fmt::format("`{}` wrote more than {} bytes", argv[0], max_bytes);
      break;
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  return r;
}

namespace {

constexpr std::chrono::seconds kGitTimeout{30};

CommandOutput git(const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  static const std::map<std::string, std::string> env = {{"GIT_TERMINAL_PROMPT", "0"}, {"GIT_OPTIONAL_LOCKS", "0"}};
  return run_command(argv, env, kGitTimeout);
}

bool ok(const CommandOutput& r) { return r.failure.empty() && r.exit_code == 0; }

}  // namespace

std::optional<GitDiffToRemoteResult> git_diff_to_remote(const std::string& cwd) {
  auto top = git(cwd, {"rev-parse", "--show-toplevel"});
  if (!ok(top)) return std::nullopt;
  std::string root = text::trim(top.out);
  if (root.empty()) return std::nullopt;

  GitDiffToRemoteResult result;
  for (const char* base : {"@{upstream}", "origin/HEAD", "origin/main", "origin/master"}) {
    auto mb = git(root, {"merge-base", "HEAD", base});
    if (ok(mb) && !text::trim(mb.out).empty()) {
      result.sha = text::trim(mb.out);
      break;
    }
  }
  if (result.sha.empty()) {
    auto head = git(root, {"rev-parse", "--verify", "--quiet", "HEAD"});
    if (!ok(head) || text::trim(head.out).empty()) return std::nullopt;  // no commit at all
    result.sha = text::trim(head.out);
  }

  auto tracked = git(root, {"diff", "--no-color", "--no-textconv", "--no-ext-diff", result.sha});
  if (!ok(tracked)) return std::nullopt;
  result.diff = std::move(tracked.out);

  auto others = git(root, {"ls-files", "--others", "--exclude-standard", "-z"});
  if (!ok(others)) return std::nullopt;
  std::string_view rest = others.out;
  while (!rest.empty()) {
    auto end = rest.find('\0');
    std::string file(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (file.empty()) continue;
    // Exit status 1 means "there are differences", which a new file always has.
    auto added = git(root, {"diff", "--no-color", "--no-textconv", "--no-ext-diff", "--binary", "--no-index", "--",
                            "/dev/null", file});
    if (!added.failure.empty() || (added.exit_code != 0 && added.exit_code != 1)) return std::nullopt;
    result.diff += added.out;
  }
  return result;
}

}  // namespace llmx::api
