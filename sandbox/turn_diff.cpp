#include "sandbox/turn_diff.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "protocol/base/crypto.hpp"
#include "sandbox/apply_patch.hpp"
#include "sandbox/apply_patch_util.hpp"

namespace llmx::patch {

namespace {

constexpr std::string_view kZeroOid = "0000000000000000000000000000000000000000";
constexpr std::string_view kDevNull = "/dev/null";

std::optional<std::string> file_mode(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  if (S_ISLNK(st.st_mode)) return "120000";
  return (st.st_mode & 0111) ? "100755" : "100644";
}

// Current bytes of `path`: the link target for symlinks; none when it does not exist (a
// dangling symlink counts as missing) or cannot be read.
std::optional<std::string> blob_bytes(const std::string& path, std::string_view mode) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (mode == "120000") {
    std::string target(4096, '\0');
    ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) return std::nullopt;
    target.resize(size_t(n));
    return target;
  }
  auto r = util::read_bytes(path);
  return r.data;
}

std::vector<std::string_view> components(std::string_view p) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t slash = p.find('/', pos);
    if (slash == std::string_view::npos) slash = p.size();
    auto part = p.substr(pos, slash - pos);
    if (!part.empty() && part != ".") out.push_back(part);
    pos = slash + 1;
  }
  return out;
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool git_marker(const std::string& dir) {
  struct stat st;
  std::string m = dir == "/" ? "/.git" : dir + "/.git";
  return ::stat(m.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

// The nearest ancestor (starting at the path itself when it is a directory) holding `.git`.
std::optional<std::string> git_root(const std::string& path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  auto parts = components(path);
  if (!is_dir(path)) {
    if (parts.empty()) return std::nullopt;
    parts.pop_back();
  }
  for (;;) {
    std::string dir = "/";
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) dir.push_back('/');
      dir.append(parts[i]);
    }
    if (git_marker(dir)) return dir;
    if (parts.empty()) return std::nullopt;
    parts.pop_back();
  }
}

// Repo-relative display path when inside a git work tree, else the path as given.
std::string display_path(const std::string& path) {
  auto root = git_root(path);
  if (!root) return path;
  auto p = components(path), r = components(*root);
  if (p.size() < r.size() || !std::equal(r.begin(), r.end(), p.begin())) return path;
  std::string out;
  for (size_t i = r.size(); i < p.size(); ++i) {
    if (i > r.size()) out.push_back('/');
    out.append(p[i]);
  }
  return out;
}

}  // namespace

std::string git_blob_oid(std::string_view data) {
  std::string buf = "blob " + std::to_string(data.size());
  buf.push_back('\0');
  buf.append(data);
  return crypto::sha1_hex(buf);
}

void TurnDiffTracker::on_patch_begin(const std::map<std::string, FileChange>& changes) {
  for (const auto& [path, change] : changes) {
    auto it = by_path_.find(path);
    if (it == by_path_.end()) {
      // First sight of this path: snapshot what is on disk now (missing = /dev/null side).
      Baseline b{path, "", "100644", std::string(kZeroOid)};
      struct stat st;
      if (::stat(path.c_str(), &st) == 0) {
        b.mode = file_mode(path).value_or("100644");
        b.content = blob_bytes(path, b.mode).value_or("");
        b.oid = git_blob_oid(b.content);
      }
      it = by_path_.emplace(path, baselines_.size()).first;
      baselines_.push_back(std::move(b));
      current_.push_back(path);
    }
    // A move re-maps the tracked file to its destination.
    if (auto* u = change.get_if<FileUpdate>(); u && u->move_path) {
      size_t id = it->second;
      by_path_.erase(it);
      current_[id] = *u->move_path;
      by_path_.insert_or_assign(*u->move_path, id);
    }
  }
}

std::string TurnDiffTracker::file_diff(size_t id) const {
  const Baseline& base = baselines_[id];
  const std::string& cur = current_[id];
  std::string cur_mode = file_mode(cur).value_or("100644");
  std::optional<std::string> right = blob_bytes(cur, cur_mode);
  std::string left_display = display_path(base.path), right_display = display_path(cur);
  std::string right_oid = right ? git_blob_oid(*right) : std::string(kZeroOid);

  bool left_present = base.oid != kZeroOid;
  std::optional<std::string> left = left_present ? std::optional(base.content) : std::nullopt;
  if (left == right) return "";

  std::string out = "diff --git a/" + left_display + " b/" + right_display + "\n";
  bool is_add = !left_present && right, is_delete = left_present && !right;
  if (is_add) {
    out += "new file mode " + cur_mode + "\n";
  } else if (is_delete) {
    out += "deleted file mode " + base.mode + "\n";
  } else if (base.mode != cur_mode) {
    out += "old mode " + base.mode + "\nnew mode " + cur_mode + "\n";
  }

  bool left_text = left && util::valid_utf8(*left), right_text = right && util::valid_utf8(*right);
  bool text = (left_text && right_text) || (right_text && is_add) || (left_text && is_delete);
  std::string old_header = left_present ? "a/" + left_display : std::string(kDevNull);
  std::string new_header = right ? "b/" + right_display : std::string(kDevNull);
  out += "index " + base.oid + ".." + right_oid + "\n";
  if (text) {
    std::string hunks = patch::unified_diff(left ? *left : "", right ? *right : "", 3);
    if (!hunks.empty()) out += "--- " + old_header + "\n+++ " + new_header + "\n" + hunks;
  } else {
    out += "--- " + old_header + "\n+++ " + new_header + "\nBinary files differ\n";
  }
  return out;
}

std::string TurnDiffTracker::unified_diff() const {
  std::vector<size_t> order(baselines_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::vector<std::string> keys;
  for (const auto& p : current_) keys.push_back(display_path(p));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });

  std::string out;
  for (size_t id : order) {
    out += file_diff(id);
    // Like the reference, every step ends the text with a newline, so an unchanged first file
    // leaves a leading blank line.
    if (out.empty() || out.back() != '\n') out.push_back('\n');
  }
  return util::trim(out).empty() ? "" : out;
}

}  // namespace llmx::patch
