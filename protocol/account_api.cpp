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

// --- getUserSavedConfig --------------------------------------------------------------------------

namespace {

using config_detail::Ctx;
using config_detail::Section;

// Allowed spellings (the same lists the config loader checks).
#define LLMX_APPROVALS {"untrusted", "on-failure", "on-request", "never"}
#define LLMX_SANDBOX_MODES {"read-only", "workspace-write", "danger-full-access"}
#define LLMX_EFFORTS {"minimal", "low", "medium", "high"}
#define LLMX_SUMMARIES {"auto", "concise", "detailed", "none"}
#define LLMX_VERBOSITIES {"low", "medium", "high"}

ProfileSettings read_profile(const Section& t) {
  ProfileSettings p;
  p.model = t.string("model");
  p.modelProvider = t.string("model_provider");
  p.approvalPolicy = t.one_of("approval_policy", LLMX_APPROVALS);
  p.modelReasoningEffort = t.one_of("model_reasoning_effort", LLMX_EFFORTS);
  p.modelReasoningSummary = t.one_of("model_reasoning_summary", LLMX_SUMMARIES);
  p.modelVerbosity = t.one_of("model_verbosity", LLMX_VERBOSITIES);
  p.chatgptBaseUrl = t.string("chatgpt_base_url");
  return p;
}

UserSavedConfig read_saved_config(const Section& root) {
  UserSavedConfig c;
  c.approvalPolicy = root.one_of("approval_policy", LLMX_APPROVALS);
  c.sandboxMode = root.one_of("sandbox_mode", LLMX_SANDBOX_MODES);
  if (auto sw = root.table("sandbox_workspace_write")) {
    SandboxSettings s;
    s.writableRoots = sw->strings("writable_roots").value_or(std::vector<std::string>{});
    s.networkAccess = sw->boolean("network_access");
    s.excludeTmpdirEnvVar = sw->boolean("exclude_tmpdir_env_var");
    s.excludeSlashTmp = sw->boolean("exclude_slash_tmp");
    c.sandboxSettings = std::move(s);
  }
  c.forcedChatgptWorkspaceId = root.string("forced_chatgpt_workspace_id");
  c.forcedLoginMethod = root.one_of("forced_login_method", {"chatgpt", "api"});
  c.model = root.string("model");
  c.modelReasoningEffort = root.one_of("model_reasoning_effort", LLMX_EFFORTS);
  c.modelReasoningSummary = root.one_of("model_reasoning_summary", LLMX_SUMMARIES);
  c.modelVerbosity = root.one_of("model_verbosity", LLMX_VERBOSITIES);
  if (auto tools = root.table("tools")) {
    ToolsSettings t;
    t.webSearch = tools->boolean("web_search");
    if (!t.webSearch) t.webSearch = tools->boolean("web_search_request");
    t.viewImage = tools->boolean("view_image");
    c.tools = t;
  }
  c.profile = root.string("profile");
  if (auto profiles = root.table("profiles")) {
    for (const auto& [name, node] : profiles->table()) {
      std::string key(name.str());
      if (auto p = profiles->table(key)) c.profiles[key] = read_profile(*p);
    }
  }
  return c;
}

#undef LLMX_APPROVALS
#undef LLMX_SANDBOX_MODES
#undef LLMX_EFFORTS
#undef LLMX_SUMMARIES
#undef LLMX_VERBOSITIES

}  // namespace

UserSavedConfig user_saved_config_from_toml(std::string_view text, const std::string& file) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& err) {
    throw SavedConfigError(false, fmt::format("{}:{}:{}: {}", file, err.source().begin.line,
                                              err.source().begin.column, err.description()));
  }
  std::vector<std::string> warnings;
  Ctx ctx(file, warnings);
  try {
    return read_saved_config(Section(ctx, root));
  } catch (const ConfigError& err) {
    throw SavedConfigError(false, err.what());
  }
}

UserSavedConfig load_user_saved_config(const std::string& home) {
  std::string file = (fs::path(home) / "config.toml").string();
  std::error_code ec;
  if (!fs::exists(file, ec)) return UserSavedConfig{};
  if (fs::is_directory(file, ec)) throw SavedConfigError(true, fmt::format("cannot read {}: it is a directory", file));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SavedConfigError(true, fmt::format("cannot read {}: {}", file, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return user_saved_config_from_toml(text.str(), file);
}

// --- rate limits --------------------------------------------------------------------------------------

RateLimitWindowV2 to_v2(const RateLimitWindow& w) {
  RateLimitWindowV2 out;
  out.usedPercent = std::isfinite(w.used_percent) ? static_cast<int64_t>(std::llround(w.used_percent)) : 0;
  out.windowDurationMins = w.window_minutes;
  out.resetsAt = w.resets_at;
  return out;
}

RateLimitSnapshotV2 to_v2(const RateLimitSnapshot& s) {
  RateLimitSnapshotV2 out;
  if (s.primary) out.primary = to_v2(*s.primary);
  if (s.secondary) out.secondary = to_v2(*s.secondary);
  return out;
}

// --- feedback ---------------------------------------------------------------------------------------

namespace {
struct FeedbackRecord {
  std::string timestamp;
  std::string classification;
  Nullable<std::string> reason;
  Nullable<std::string> conversationId;
  bool includeLogs = false;
  LLMX_FIELDS(v("timestamp", s.timestamp); v("classification", s.classification); v("reason", s.reason);
              v("conversationId", s.conversationId); v("includeLogs", s.includeLogs))
};
}  // namespace

std::string feedback_line(const FeedbackUploadParams& p, std::chrono::system_clock::time_point now) {
  return json::to_json(FeedbackRecord{rollout::format_timestamp(now), p.classification, p.reason, p.conversationId,
                                      p.includeLogs});
}

void append_feedback(const std::string& home, const std::string& line) {
  std::string file = (fs::path(home) / "feedback.jsonl").string();
  int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", file, std::strerror(errno)));
  std::string data = line + "\n";
  std::string_view rest = data;
  while (!rest.empty()) {
    ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("cannot write {}: {}", file, std::strerror(e)));
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (::close(fd) != 0) throw std::runtime_error(fmt::format("cannot write {}: {}", file, std::strerror(errno)));
}

// --- conversation summary -----------------------------------------------------------------------------

SummaryTarget summary_target(const GetConversationSummaryParams& p, const std::string& home) {
  SummaryTarget t;
  if (p.rolloutPath) {
    fs::path path(*p.rolloutPath);
    if (path.is_relative()) path = fs::path(home) / path;
    t.path = path.lexically_normal().string();
    return t;
  }
  if (p.conversationId) {
    t.id = *p.conversationId;
    t.bad_id = !is_uuid(*p.conversationId);
    return t;
  }
  throw std::invalid_argument("either `rolloutPath` or `conversationId` is required");
}

ConversationSummary summary_from(const threads::ThreadSummary& t, const std::string& default_provider) {
  ConversationSummary s;
  s.conversationId = t.id;
  s.path = t.path;
  s.preview = t.preview;
  if (!t.created_at.empty()) s.timestamp = t.created_at;
  s.modelProvider = t.model_provider.value_or(default_provider);
  s.cwd = t.cwd;
  s.cliVersion = t.cli_version;
  s.source = !t.source.empty() && t.source.front() == '{' ? RawJson{t.source} : RawJson{json::to_json(t.source)};
  if (t.git) s.gitInfo = GitInfoWire{t.git->commit_hash, t.git->branch, t.git->repository_url};
  return s;
}

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

// --- fuzzy matching ----------------------------------------------------------------------------------

namespace {

constexpr int kScoreMatch = 16;
constexpr int kGapStart = -3;
constexpr int kGapExtension = -1;
constexpr int kBonusStart = 10;
constexpr int kBonusSlash = 9;
constexpr int kBonusDelimiter = 8;
constexpr int kBonusCamel = 7;
constexpr int kBonusConsecutive = 4;
constexpr int kFirstCharMultiplier = 2;
constexpr int kNone = INT_MIN / 4;

// Code points of `s`; a byte that starts no valid sequence stands for itself.
std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool valid = true;
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!valid) {
      out.push_back(c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

char32_t fold(char32_t c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }
bool is_lower(char32_t c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char32_t c) { return c >= 'A' && c <= 'Z'; }

int bonus_at(const std::vector<char32_t>& cand, size_t j) {
  if (j == 0) return kBonusStart;
  char32_t prev = cand[j - 1], cur = cand[j];
  if (prev == '/') return kBonusSlash;
  if (prev == '_' || prev == '-' || prev == '.' || prev == ' ') return kBonusDelimiter;
  if (is_lower(prev) && is_upper(cur)) return kBonusCamel;
  return 0;
}

// Best alignment of one (folded) term in the candidate: dynamic programming over (term char,
// candidate position); a gap's cost grows with its length, so a running maximum replaces the
// inner loop.
std::optional<FuzzyScore> score_term(const std::vector<char32_t>& term, const std::vector<char32_t>& folded,
                                     const std::vector<int>& bonus) {
  const size_t m = term.size(), n = folded.size();
  if (m == 0 || m > n) return std::nullopt;
  {  // quick rejection: is it a subsequence at all?
    size_t i = 0;
    for (size_t j = 0; j < n && i < m; ++j)
      if (folded[j] == term[i]) ++i;
    if (i < m) return std::nullopt;
  }
  std::vector<int> score(m * n, kNone);
  std::vector<int> from(m * n, -1);
  for (size_t i = 0; i < m; ++i) {
    int run = kNone;  // best score[i-1][k] + gap cost for k <= j-2
    int run_k = -1;
    for (size_t j = i; j < n; ++j) {
      if (i > 0 && j >= 2) {
        int grown = run == kNone ? kNone : run + kGapExtension;
        int fresh = score[(i - 1) * n + (j - 2)];
        fresh = fresh == kNone ? kNone : fresh + kGapStart;
        if (fresh >= grown && fresh != kNone) {
          run = fresh;
          run_k = static_cast<int>(j - 2);
        } else {
          run = grown;
        }
      }
      if (folded[j] != term[i]) continue;
      int here = kScoreMatch + bonus[j] * (i == 0 ? kFirstCharMultiplier : 1);
      if (i == 0) {
        score[j] = here;
        continue;
      }
      int best = kNone, best_k = -1;
      int adjacent = score[(i - 1) * n + (j - 1)];
      if (adjacent != kNone) {
        best = adjacent + kBonusConsecutive;
        best_k = static_cast<int>(j - 1);
      }
      if (run != kNone && run > best) {
        best = run;
        best_k = run_k;
      }
      if (best == kNone) continue;
      score[i * n + j] = here + best;
      from[i * n + j] = best_k;
    }
  }
  int best = kNone;
  size_t best_j = 0;
  for (size_t j = m - 1; j < n; ++j) {
    if (score[(m - 1) * n + j] > best) {
      best = score[(m - 1) * n + j];
      best_j = j;
    }
  }
  if (best == kNone) return std::nullopt;
  FuzzyScore out;
  out.score = best;
  out.indices.resize(m);
  int j = static_cast<int>(best_j);
  for (size_t i = m; i-- > 0;) {
    out.indices[i] = static_cast<uint32_t>(j);
    j = from[i * n + static_cast<size_t>(j)];
  }
  return out;
}

}  // namespace

std::optional<FuzzyScore> fuzzy_score(std::string_view query, std::string_view candidate) {
  auto cand = code_points(candidate);
  std::vector<char32_t> folded(cand.size());
  std::vector<int> bonus(cand.size());
  for (size_t j = 0; j < cand.size(); ++j) {
    folded[j] = fold(cand[j]);
    bonus[j] = bonus_at(cand, j);
  }
  FuzzyScore total;
  bool any = false;
  auto q = code_points(query);
  for (size_t i = 0; i < q.size();) {
    while (i < q.size() && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r')) ++i;
    std::vector<char32_t> term;
    while (i < q.size() && !(q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r')) term.push_back(fold(q[i++]));
    if (term.empty()) continue;
    auto s = score_term(term, folded, bonus);
    if (!s) return std::nullopt;
    any = true;
    total.score += s->score;
    total.indices.insert(total.indices.end(), s->indices.begin(), s->indices.end());
  }
  if (!any) return std::nullopt;
  std::sort(total.indices.begin(), total.indices.end());
  total.indices.erase(std::unique(total.indices.begin(), total.indices.end()), total.indices.end());
  return total;
}

void sort_matches(std::vector<FuzzyFileMatch>& matches) {
  std::sort(matches.begin(), matches.end(), [](const FuzzyFileMatch& a, const FuzzyFileMatch& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.path != b.path) return a.path < b.path;
    return a.root < b.root;
  });
}

// --- .gitignore ------------------------------------------------------------------------------------

namespace {

// A glob over a `/`-separated path: `*` and `?` stay within a component, `**/` spans any number
// of directories, `[...]` classes (with ranges and `!`/`^`), `\` escapes.
bool glob(std::string_view p, std::string_view t) {
  while (!p.empty()) {
    if (p.starts_with("**")) {
      std::string_view rest = p.substr(2);
      if (rest.starts_with("/")) {
        rest.remove_prefix(1);
        if (glob(rest, t)) return true;
        for (size_t i = 0; i < t.size(); ++i)
          if (t[i] == '/' && glob(rest, t.substr(i + 1))) return true;
        return false;
      }
      for (size_t i = 0; i <= t.size(); ++i)
        if (glob(rest, t.substr(i))) return true;
      return false;
    }
    char c = p[0];
    if (c == '*') {
      std::string_view rest = p.substr(1);
      for (size_t i = 0; i <= t.size(); ++i) {
        if (glob(rest, t.substr(i))) return true;
        if (i < t.size() && t[i] == '/') break;
      }
      return false;
    }
    if (t.empty()) return false;
    if (c == '?') {
      if (t[0] == '/') return false;
      p.remove_prefix(1);
      t.remove_prefix(1);
      continue;
    }
    if (c == '[') {
      size_t i = 1;
      bool negate = i < p.size() && (p[i] == '!' || p[i] == '^');
      if (negate) ++i;
      size_t start = i;
      bool matched = false;
      while (i < p.size() && (p[i] != ']' || i == start)) {
        char lo = p[i];
        if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
          if (t[0] >= lo && t[0] <= p[i + 2]) matched = true;
          i += 3;
        } else {
          if (t[0] == lo) matched = true;
          ++i;
        }
      }
      if (i < p.size()) {  // a closed class
        if (matched == negate || t[0] == '/') return false;
        p.remove_prefix(i + 1);
        t.remove_prefix(1);
        continue;
      }
      // no closing bracket: a literal '['
    }
    if (c == '\\' && p.size() > 1) {
      p.remove_prefix(1);
      c = p[0];
    }
    if (t[0] != c) return false;
    p.remove_prefix(1);
    t.remove_prefix(1);
  }
  return t.empty();
}

struct IgnoreRule {
  std::string base;  // the .gitignore's directory relative to the root, "" or "a/b/"
  std::string pattern;
  bool negate = false;
  bool dir_only = false;
  bool anchored = false;
};

std::optional<IgnoreRule> parse_rule(std::string_view line, const std::string& base) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
    line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return std::nullopt;
  IgnoreRule r;
  r.base = base;
  if (line[0] == '!') {
    r.negate = true;
    line.remove_prefix(1);
  } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    r.dir_only = true;
    line.remove_suffix(1);
  }
  if (line.empty()) return std::nullopt;
  r.anchored = line.find('/') != std::string_view::npos;
  if (line[0] == '/') line.remove_prefix(1);
  r.pattern = std::string(line);
  return r;
}

bool rule_matches(const IgnoreRule& r, std::string_view rel, bool is_dir) {
  if (r.dir_only && !is_dir) return false;
  if (!rel.starts_with(r.base)) return false;
  std::string_view sub = rel.substr(r.base.size());
  if (r.anchored) return glob(r.pattern, sub);
  auto slash = sub.rfind('/');
  return glob(r.pattern, slash == std::string_view::npos ? sub : sub.substr(slash + 1));
}

bool ignored(const std::vector<IgnoreRule>& rules, std::string_view rel, bool is_dir) {
  bool result = false;
  for (const auto& r : rules)
    if (rule_matches(r, rel, is_dir)) result = !r.negate;
  return result;
}

void load_gitignore(const fs::path& dir, const std::string& base, std::vector<IgnoreRule>& rules) {
  std::ifstream in(dir / ".gitignore");
  if (!in) return;
  std::string line;
  while (std::getline(in, line))
    if (auto r = parse_rule(line, base)) rules.push_back(std::move(*r));
}

constexpr size_t kMaxEntriesPerRoot = 1'000'000;
constexpr size_t kMaxDepth = 128;

struct Walk {
  std::string root;
  std::string_view query;
  const std::atomic<bool>* cancel;
  size_t per_root;
  size_t visited = 0;
  std::vector<IgnoreRule> rules;
  std::vector<FuzzyFileMatch> matches;

  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }

  void keep_best() {
    sort_matches(matches);
    if (matches.size() > per_root) matches.resize(per_root);
  }

  void consider(const std::string& rel) {
    auto s = fuzzy_score(query, rel);
    if (!s) return;
    FuzzyFileMatch m;
    m.root = root;
    m.path = rel;
    auto slash = rel.rfind('/');
    m.file_name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    m.score = s->score;
    m.indices = std::move(s->indices);
    matches.push_back(std::move(m));
    if (matches.size() >= 4 * per_root + 64) keep_best();
  }

  // Returns false to stop the whole walk.
  bool dir(const fs::path& path, const std::string& base, size_t depth) {
    if (depth > kMaxDepth) return true;
    size_t rules_before = rules.size();
    load_gitignore(path, base, rules);
    std::error_code ec;
    fs::directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    bool go_on = true;
    for (; go_on && !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (++visited > kMaxEntriesPerRoot || ((visited & 255) == 0 && cancelled())) {
        go_on = false;
        break;
      }
      const auto& entry = *it;
      std::string name = entry.path().filename().string();
      std::string rel = base + name;
      std::error_code sec;
      auto lst = entry.symlink_status(sec);
      if (sec) continue;
      bool is_dir = fs::is_directory(lst);
      if (fs::is_symlink(lst)) {
        auto target = entry.status(sec);
        if (sec || !fs::is_regular_file(target)) continue;  // symlinked directories are not followed
      } else if (!is_dir && !fs::is_regular_file(lst)) {
        continue;
      }
      if (is_dir && name == ".git") continue;
      if (ignored(rules, rel, is_dir)) continue;
      if (is_dir)
        go_on = dir(entry.path(), rel + "/", depth + 1);
      else
        consider(rel);
    }
    rules.resize(rules_before);
    return go_on;
  }
};

}  // namespace

bool gitignore_match(std::string_view pattern, std::string_view rel_path, bool is_dir) {
  auto r = parse_rule(pattern, "");
  return r && rule_matches(*r, rel_path, is_dir);
}

std::vector<FuzzyFileMatch> fuzzy_file_search(std::string_view query, const std::vector<std::string>& roots,
                                              const std::atomic<bool>* cancel, size_t per_root) {
  std::vector<FuzzyFileMatch> all;
  if (text::trim_view(query).empty() || per_root == 0) return all;
  for (const auto& root : roots) {
    if (cancel && cancel->load()) break;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    Walk w{root, query, cancel, per_root, 0, {}, {}};
    w.dir(fs::path(root), "", 0);
    w.keep_best();
    all.insert(all.end(), std::make_move_iterator(w.matches.begin()), std::make_move_iterator(w.matches.end()));
  }
  sort_matches(all);
  return all;
}

}  // namespace llmx::api
