#include "protocol/config/project_doc.hpp"
#include "protocol/base/files.hpp"
#include "protocol/base/text.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace llmx::project_doc {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kWhitespace = " \t\r\n\f\v";

std::string trim(std::string_view s) { return text::trim(s, kWhitespace); }

// Up to `limit` bytes of a file; nullopt when it cannot be read. Through the settings cache:
// every config derivation looks for these files.
std::optional<std::string> read_prefix(const fs::path& p, uint64_t limit) {
  auto text = files::settings_cache().read(p.string());
  if (!text) return std::nullopt;
  return text->substr(0, static_cast<size_t>(std::min<uint64_t>(limit, text->size())));
}

std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  auto p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  return p.empty() ? dir : p.string();
}

}  // namespace

std::string utf8_lossy(std::string_view s) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // Sequence length and the allowed range of the second byte (rules out overlong forms,
    // surrogates and code points above U+10FFFF).
    int len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      out += kReplacement;
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool ok = true;
    for (int k = 1; k < len; ++k, ++j) {
      if (j >= n) {
        ok = false;
        break;
      }
      auto d = static_cast<unsigned char>(s[j]);
      if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.append(s.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len);
    } else {
      // One replacement for the longest valid prefix of the broken sequence.
      out += kReplacement;
      i = j;
    }
  }
  return out;
}

std::optional<std::string> find_git_root(const std::string& dir) {
  fs::path p = absolute_dir(dir);
  std::error_code ec;
  while (p.has_parent_path() && p.parent_path() != p) {
    if (fs::exists(p / ".git", ec)) return p.string();
    p = p.parent_path();
  }
  return std::nullopt;
}

std::optional<std::string> main_repository_root(const std::string& git_root) {
  fs::path marker = fs::path(git_root) / ".git";
  std::error_code ec;
  if (!fs::is_regular_file(marker, ec)) return std::nullopt;
  auto text = read_prefix(marker, 4096);
  if (!text) return std::nullopt;
  std::string line = trim(text->substr(0, text->find('\n')));
  if (!line.starts_with("gitdir:")) return std::nullopt;
  fs::path gitdir = trim(line.substr(7));
  if (gitdir.is_relative()) gitdir = fs::path(git_root) / gitdir;
  std::string g = gitdir.lexically_normal().generic_string();
  auto pos = g.find("/.git/worktrees/");
  if (pos == std::string::npos) return std::nullopt;
  return g.substr(0, pos);
}

std::vector<std::string> candidate_names(const std::vector<std::string>& fallbacks) {
  std::vector<std::string> names{"AGENTS.override.md", "AGENTS.md"};
  for (const auto& f : fallbacks) {
    std::string name = trim(f);
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::vector<std::string> search_dirs(const std::string& cwd) {
  std::string start = absolute_dir(cwd);
  auto root = find_git_root(start);
  if (!root) return {start};
  std::vector<std::string> dirs;
  for (fs::path p = start;; p = p.parent_path()) {
    dirs.push_back(p.string());
    if (p.string() == *root || !p.has_parent_path() || p.parent_path() == p) break;
  }
  std::reverse(dirs.begin(), dirs.end());
  return dirs;
}

std::vector<std::string> discover(const std::string& cwd, const std::vector<std::string>& fallbacks) {
  auto names = candidate_names(fallbacks);
  std::vector<std::string> found;
  for (const auto& dir : search_dirs(cwd)) {
    for (const auto& name : names) {
      fs::path p = fs::path(dir) / name;
      std::error_code ec;
      auto st = fs::symlink_status(p, ec);
      if (!ec && (fs::is_regular_file(st) || fs::is_symlink(st))) {
        found.push_back(p.string());
        break;
      }
    }
  }
  return found;
}

std::optional<std::string> read_global(const std::string& home) {
  for (const char* name : {"AGENTS.override.md", "AGENTS.md"}) {
    auto text = read_prefix(fs::path(home) / name, UINT64_MAX);
    if (!text) continue;
    std::string trimmed = trim(utf8_lossy(*text));
    if (!trimmed.empty()) return trimmed;
  }
  return std::nullopt;
}

std::optional<std::string> read_project_docs(const std::string& cwd, int64_t max_bytes,
                                             const std::vector<std::string>& fallbacks) {
  if (max_bytes <= 0) return std::nullopt;
  auto remaining = static_cast<uint64_t>(max_bytes);
  std::vector<std::string> parts;
  for (const auto& path : discover(cwd, fallbacks)) {
    if (remaining == 0) break;
    auto data = read_prefix(path, remaining);
    if (!data) continue;  // unreadable (a dangling symlink, a directory behind a link): skipped
    std::string text = utf8_lossy(*data);
    if (trim(text).empty()) continue;
    parts.push_back(std::move(text));
    remaining -= std::min<uint64_t>(remaining, data->size());
  }
  if (parts.empty()) return std::nullopt;
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out += "\n\n" + parts[i];
  return out;
}

std::optional<std::string> user_instructions(const std::string& home, const std::string& cwd, int64_t max_bytes,
                                             const std::vector<std::string>& fallbacks) {
  auto global = read_global(home);
  auto project = read_project_docs(cwd, max_bytes, fallbacks);
  if (global && project) return *global + "\n\n--- project-doc ---\n\n" + *project;
  return global ? global : project;
}

std::string instructions_message(const std::string& cwd, const std::string& instructions) {
  return "# AGENTS.md instructions for " + cwd + "\n\n<INSTRUCTIONS>\n" + instructions + "\n</INSTRUCTIONS>";
}

}  // namespace llmx::project_doc
