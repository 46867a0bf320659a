#include "protocol/rpc/account_api.hpp"
#include "protocol/base/files.hpp"

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

#include "protocol/config/config_reader.hpp"
#include "protocol/config/toml_guard.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/store/rollout.hpp"
#include "protocol/base/text.hpp"

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
    root = parse_toml(text, file);
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
  int err = 0;
  auto text = files::read(file, &err);
  if (!text) throw SavedConfigError(true, fmt::format("cannot read {}: {}", file, std::strerror(err)));
  return user_saved_config_from_toml(*text, file);
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
  s.source = JsonOf<SessionSource>{!t.source.empty() && t.source.front() == '{' ? t.source : json::to_json(t.source)};
  if (t.git) s.gitInfo = GitInfoWire{t.git->commit_hash, t.git->branch, t.git->repository_url};
  return s;
}

}  // namespace llmx::api
