#include "protocol/workspace/git_info.hpp"
#include "protocol/base/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string_view>

#include "protocol/base/text.hpp"

namespace llmx {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string join(const std::string& dir, std::string_view rel) {
  if (rel.starts_with('/')) return std::string(rel);
  return dir + "/" + std::string(rel);
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// SHA-1 or SHA-256 object name.
bool is_object_name(std::string_view s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

struct Repo {
  std::string git_dir;     // HEAD lives here
  std::string common_dir;  // refs, packed-refs, config (differs for linked worktrees)
};

std::optional<Repo> find_repo(std::string dir) {
  if (!dir.starts_with('/')) {
    char buf[4096];
    if (!::getcwd(buf, sizeof buf)) return std::nullopt;
    dir = std::string(buf) + (dir.empty() ? "" : "/" + dir);
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  for (;;) {
    std::string dot_git = (dir == "/" ? "" : dir) + "/.git";
    Repo repo;
    if (is_dir(dot_git)) {
      repo.git_dir = dot_git;
    } else if (is_file(dot_git)) {
      // Worktrees and submodules: `gitdir: <path>`, relative to the directory holding .git.
      auto text = files::read(dot_git);
      std::string_view t = text ? trim(*text) : std::string_view();
      if (t.starts_with("gitdir:")) repo.git_dir = join(dir, trim(t.substr(7)));
    }
    if (!repo.git_dir.empty() && is_file(repo.git_dir + "/HEAD")) {
      repo.common_dir = repo.git_dir;
      if (auto common = files::read(repo.git_dir + "/commondir"))
        repo.common_dir = join(repo.git_dir, trim(*common));
      return repo;
    }
    if (dir == "/") return std::nullopt;
    auto slash = dir.rfind('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
}

std::optional<std::string> resolve_ref(const Repo& repo, const std::string& ref, int depth = 0) {
  if (depth > 5) return std::nullopt;  // symbolic ref loop
  for (const auto* base : {&repo.git_dir, &repo.common_dir}) {
    auto text = files::read(*base + "/" + ref);
    if (!text) continue;
    std::string_view t = trim(*text);
    if (t.starts_with("ref:")) return resolve_ref(repo, std::string(trim(t.substr(4))), depth + 1);
    if (is_object_name(t)) return std::string(t);
  }
  // packed-refs: `<hash> <ref>` lines; `#` starts the header, `^` a peeled tag.
  if (auto packed = files::read(repo.common_dir + "/packed-refs")) {
    std::istringstream lines(*packed);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#' || line[0] == '^') continue;
      auto space = line.find(' ');
      if (space == std::string::npos) continue;
      if (trim(std::string_view(line).substr(space + 1)) == ref) {
        std::string_view hash = std::string_view(line).substr(0, space);
        if (is_object_name(hash)) return std::string(hash);
      }
    }
  }
  return std::nullopt;
}

// The value of `url` in `[remote "origin"]` (or the old `[remote.origin]` spelling).
std::optional<std::string> origin_url(const Repo& repo) {
  auto config = files::read(repo.common_dir + "/config");
  if (!config) return std::nullopt;
  std::istringstream lines(*config);
  bool in_origin = false;
  for (std::string raw; std::getline(lines, raw);) {
    std::string_view line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      auto close = line.find(']');
      std::string_view header = trim(line.substr(1, close == std::string_view::npos ? line.size() - 1 : close - 1));
      auto quote = header.find('"');
      if (quote != std::string_view::npos) {
        std::string_view sub = header.substr(quote + 1);
        if (!sub.empty() && sub.back() == '"') sub.remove_suffix(1);
        in_origin = text::lower(trim(header.substr(0, quote))) == "remote" && sub == "origin";
      } else {
        in_origin = text::lower(header) == "remote.origin";
      }
      continue;
    }
    if (!in_origin) continue;
    auto eq = line.find('=');
    if (eq == std::string_view::npos || text::lower(trim(line.substr(0, eq))) != "url") continue;
    std::string_view value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"') {
      auto end = value.find('"', 1);
      return std::string(value.substr(1, end == std::string_view::npos ? value.size() - 1 : end - 1));
    }
    // An unquoted `#` or `;` starts a comment.
    if (auto c = value.find_first_of("#;"); c != std::string_view::npos) value = trim(value.substr(0, c));
    return std::string(value);
  }
  return std::nullopt;
}

}  // namespace

std::optional<rollout::GitInfo> read_git_info(const std::string& cwd) {
  auto repo = find_repo(cwd);
  if (!repo) return std::nullopt;
  rollout::GitInfo info;
  std::string_view head;
  auto head_text = files::read(repo->git_dir + "/HEAD");
  if (head_text) head = trim(*head_text);
  if (head.starts_with("ref:")) {
    std::string ref(trim(head.substr(4)));
    constexpr std::string_view heads = "refs/heads/";
    info.branch = ref.starts_with(heads) ? ref.substr(heads.size()) : ref;
    info.commit_hash = resolve_ref(*repo, ref);
  } else if (is_object_name(head)) {
    info.commit_hash = std::string(head);  // detached
  }
  info.repository_url = origin_url(*repo);
  return info;
}

bool inside_git_repository(const std::string& cwd) { return find_repo(cwd).has_value(); }

}  // namespace llmx
