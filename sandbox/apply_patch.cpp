// Locating and applying chunks (engine.md §8.3), verification (§8.5), applying to disk (§8.4)
// and the "all paths writable" check (§7.3).
#include "sandbox/apply_patch.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "sandbox/apply_patch_util.hpp"

namespace llmx::patch {

namespace {

// Pass 4 of seek_sequence: typographic punctuation and exotic spaces compare as ASCII.
char32_t ascii_lookalike(char32_t c) {
  switch (c) {
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2015: case 0x2212:
      return U'-';
    case 0x2018: case 0x2019: case 0x201A: case 0x201B:
      return U'\'';
    case 0x201C: case 0x201D: case 0x201E: case 0x201F:
      return U'"';
    case 0x00A0: case 0x2002: case 0x2003: case 0x2004: case 0x2005: case 0x2006: case 0x2007:
    case 0x2008: case 0x2009: case 0x200A: case 0x202F: case 0x205F: case 0x3000:
      return U' ';
    default:
      return c;
  }
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(char(c));
  } else if (c < 0x800) {
    out.push_back(char(0xC0 | (c >> 6)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(char(0xE0 | (c >> 12)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (c >> 18)));
    out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  }
}

std::string normalise(std::string_view s) {
  s = util::trim(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    size_t len = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    if (len == 1 || i + len > s.size()) {  // ASCII or a stray byte: copied as is
      out.push_back(s[i++]);
      continue;
    }
    char32_t cp = b & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    char32_t mapped = ascii_lookalike(cp);
    if (mapped == cp) out.append(s.substr(i, len));
    else append_utf8(out, mapped);
    i += len;
  }
  return out;
}

template <class Eq>
std::optional<size_t> scan(const std::vector<std::string>& lines,
                           const std::vector<std::string>& pattern, size_t from, Eq eq) {
  size_t last = lines.size() - pattern.size();
  for (size_t i = from; i <= last; ++i) {
    bool ok = true;
    for (size_t p = 0; p < pattern.size() && ok; ++p) ok = eq(lines[i + p], pattern[p]);
    if (ok) return i;
  }
  return std::nullopt;
}

std::vector<std::string> split_file_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  for (;;) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      lines.emplace_back(text.substr(pos));
      break;
    }
    lines.emplace_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  // A final newline leaves an empty last element; drop it so counts match `diff`.
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

using Replacement = std::tuple<size_t, size_t, std::vector<std::string>>;

Result<std::vector<Replacement>> compute_replacements(const std::vector<std::string>& lines,
                                                      const std::vector<UpdateChunk>& chunks,
                                                      std::string_view path) {
  std::vector<Replacement> out;
  size_t line_index = 0;
  for (const auto& chunk : chunks) {
    if (chunk.change_context) {
      auto idx = seek_sequence(lines, {*chunk.change_context}, line_index, false);
      if (!idx)
        return Result<std::vector<Replacement>>::fail("Failed to find context '" +
                                                      *chunk.change_context + "' in " +
                                                      std::string(path));
      line_index = *idx + 1;
    }
    if (chunk.old_lines.empty()) {
      // Pure insertion goes at the end of the file (before a trailing blank line), whatever
      // the context said: a reference-implementation quirk kept on purpose.
      size_t at = !lines.empty() && lines.back().empty() ? lines.size() - 1 : lines.size();
      out.emplace_back(at, 0, chunk.new_lines);
      continue;
    }
    std::vector<std::string> pattern = chunk.old_lines, repl = chunk.new_lines;
    auto found = seek_sequence(lines, pattern, line_index, chunk.is_end_of_file);
    if (!found && pattern.back().empty()) {
      // The model often ends a chunk with the file's final newline as an empty line.
      pattern.pop_back();
      if (!repl.empty() && repl.back().empty()) repl.pop_back();
      found = seek_sequence(lines, pattern, line_index, chunk.is_end_of_file);
    }
    if (!found) {
      std::string msg = "Failed to find expected lines in " + std::string(path) + ":\n";
      for (size_t i = 0; i < chunk.old_lines.size(); ++i) {
        if (i) msg.push_back('\n');
        msg += chunk.old_lines[i];
      }
      return Result<std::vector<Replacement>>::fail(std::move(msg));
    }
    out.emplace_back(*found, pattern.size(), std::move(repl));
    line_index = *found + pattern.size();
  }
  std::stable_sort(out.begin(), out.end(), [](const Replacement& a, const Replacement& b) {
    return std::get<0>(a) < std::get<0>(b);
  });
  return Result<std::vector<Replacement>>::ok(std::move(out));
}

// --- filesystem helpers -------------------------------------------------------------------------

bool write_file(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return false;
    }
    off += size_t(n);
  }
  return ::close(fd) == 0;
}

bool create_parents(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return true;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  return !ec;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Component-wise prefix test on normalised absolute paths.
bool path_starts_with(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

}  // namespace

// --- public -------------------------------------------------------------------------------------

std::optional<size_t> seek_sequence(const std::vector<std::string>& lines,
                                    const std::vector<std::string>& pattern, size_t start,
                                    bool eof) {
  if (pattern.empty()) return start;
  if (pattern.size() > lines.size()) return std::nullopt;
  // In EOF mode only the last possible position is tried.
  size_t from = eof ? lines.size() - pattern.size() : start;
  if (auto i = scan(lines, pattern, from, [](const std::string& a, const std::string& b) {
        return a == b;
      }))
    return i;
  if (auto i = scan(lines, pattern, from, [](const std::string& a, const std::string& b) {
        return util::trim_end(a) == util::trim_end(b);
      }))
    return i;
  if (auto i = scan(lines, pattern, from, [](const std::string& a, const std::string& b) {
        return util::trim(a) == util::trim(b);
      }))
    return i;
  return scan(lines, pattern, from, [](const std::string& a, const std::string& b) {
    return normalise(a) == normalise(b);
  });
}

Result<std::string> apply_chunks(std::string_view original, const std::vector<UpdateChunk>& chunks,
                                 std::string_view display_path) {
  std::vector<std::string> lines = split_file_lines(original);
  auto repl = compute_replacements(lines, chunks, display_path);
  if (!repl) return Result<std::string>::fail(repl.error);
  // Last to first, so earlier indices stay valid.
  for (auto it = repl->rbegin(); it != repl->rend(); ++it) {
    auto& [start, old_len, segment] = *it;
    for (size_t k = 0; k < old_len && start < lines.size(); ++k)
      lines.erase(lines.begin() + std::ptrdiff_t(start));
    size_t at = std::min(start, lines.size());
    lines.insert(lines.begin() + std::ptrdiff_t(at), segment.begin(), segment.end());
  }
  // The result always ends with exactly one newline after the last line.
  if (lines.empty() || !lines.back().empty()) lines.emplace_back();
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out.push_back('\n');
    out += lines[i];
  }
  return Result<std::string>::ok(std::move(out));
}

Result<std::string> derive_new_contents(const std::string& fs_path,
                                        const std::vector<UpdateChunk>& chunks,
                                        std::string_view display_path) {
  auto r = util::read_text(fs_path);
  if (!r.data)
    return Result<std::string>::fail("Failed to read file to update " + std::string(display_path) +
                                     ": " + r.error);
  return apply_chunks(*r.data, chunks, display_path);
}

std::string join_path(const std::string& base, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  if (base.empty()) return path;
  if (base.back() == '/') return base + path;
  return base + "/" + path;
}

std::string normalize_path(const std::string& path) {
  bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string_view> parts;
  std::string_view s = path;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t slash = s.find('/', pos);
    if (slash == std::string_view::npos) slash = s.size();
    std::string_view part = s.substr(pos, slash - pos);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    pos = slash + 1;
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out.push_back('/');
    out.append(parts[i]);
  }
  return out;
}

Result<Verified> verify(const Patch& patch, const std::string& cwd) {
  return verify(patch, cwd, [](const std::string& path) {
    auto r = util::read_text(path);
    return r.data ? Result<std::string>::ok(std::move(*r.data)) : Result<std::string>::fail(r.error);
  });
}

Result<Verified> verify(const Patch& patch, const std::string& cwd, const ReadText& read) {
  const std::string prefix = "apply_patch verification failed: ";
  Verified v;
  v.patch = patch;
  v.cwd = cwd;
  for (const auto& h : patch.hunks) {
    std::string abs = join_path(cwd, h.path);
    switch (h.kind) {
      case Hunk::add:
        v.changes.insert_or_assign(abs, FileChange{FileAdd{h.contents}});
        break;
      case Hunk::remove: {
        auto r = read(abs);
        if (!r) return Result<Verified>::fail(prefix + "Failed to read " + abs + ": " + r.error);
        v.changes.insert_or_assign(abs, FileChange{FileDelete{std::move(*r)}});
        break;
      }
      case Hunk::update: {
        auto old_text = read(abs);
        if (!old_text)
          return Result<Verified>::fail(prefix + "Failed to read file to update " + abs + ": " + old_text.error);
        auto updated = apply_chunks(*old_text, h.chunks, abs);
        if (!updated) return Result<Verified>::fail(prefix + updated.error);
        FileUpdate u;
        u.unified_diff = unified_diff(*old_text, *updated, 1);
        if (h.move_path) u.move_path = join_path(cwd, *h.move_path);
        v.changes.insert_or_assign(abs, FileChange{std::move(u)});
        break;
      }
    }
  }
  return Result<Verified>::ok(std::move(v));
}

ApplyResult apply(const Patch& patch, const std::string& cwd) {
  FileAccess disk;
  disk.read = [](const std::string& path) {
    auto r = util::read_text(path);
    return r.data ? Result<std::string>::ok(std::move(*r.data)) : Result<std::string>::fail(r.error);
  };
  disk.write = [](const std::string& path, const std::string& content) -> std::optional<std::string> {
    if (!create_parents(path)) return "Failed to create parent directories for ";
    if (!write_file(path, content)) return "Failed to write file ";
    return std::nullopt;
  };
  disk.remove = [](const std::string& path) -> std::optional<std::string> {
    if (::unlink(path.c_str()) != 0) return std::string(std::strerror(errno));
    return std::nullopt;
  };
  return apply(patch, cwd, disk);
}

ApplyResult apply(const Patch& patch, const std::string& cwd, const FileAccess& files) {
  ApplyResult res;
  auto fail = [&](std::string msg) {
    res.exit_code = 1;
    res.stdout_text.clear();
    res.stderr_text = std::move(msg) + "\n";
    return res;
  };
  // A write error from the disk names what failed ("Failed to write file "); others are texts.
  auto write_failed = [](const std::string& err, const std::string& display) {
    if (err.starts_with("Failed to ")) return err + display;
    return "Failed to write file " + display + ": " + err;
  };
  if (patch.hunks.empty()) return fail("No files were modified.");

  std::vector<std::string> added, modified, deleted;
  for (const auto& h : patch.hunks) {
    // Messages and the summary name paths exactly as written in the patch.
    std::string fs = join_path(cwd, h.path);
    switch (h.kind) {
      case Hunk::add:
        if (auto err = files.write(fs, h.contents)) return fail(write_failed(*err, h.path));
        added.push_back(h.path);
        break;
      case Hunk::remove:
        if (files.remove(fs)) return fail("Failed to delete file " + h.path);
        deleted.push_back(h.path);
        break;
      case Hunk::update: {
        auto original = files.read(fs);
        if (!original) return fail("Failed to read file to update " + h.path + ": " + original.error);
        auto updated = apply_chunks(*original, h.chunks, h.path);
        if (!updated) return fail(updated.error);
        if (h.move_path) {
          std::string dest = join_path(cwd, *h.move_path);
          if (auto err = files.write(dest, *updated)) return fail(write_failed(*err, *h.move_path));
          if (files.remove(fs)) return fail("Failed to remove original " + h.path);
          modified.push_back(*h.move_path);
        } else {
          if (auto err = files.write(fs, *updated)) return fail(write_failed(*err, h.path));
          modified.push_back(h.path);
        }
        break;
      }
    }
  }
  res.stdout_text = "Success. Updated the following files:\n";
  for (const auto& p : added) res.stdout_text += "A " + p + "\n";
  for (const auto& p : modified) res.stdout_text += "M " + p + "\n";
  for (const auto& p : deleted) res.stdout_text += "D " + p + "\n";
  return res;
}

std::vector<std::string> files_read(const Patch& patch, const std::string& cwd) {
  std::vector<std::string> out;
  for (const auto& h : patch.hunks)
    if (h.kind != Hunk::add) out.push_back(join_path(cwd, h.path));
  return out;
}

ApplyResult run_cli(std::string_view patch_text, const std::string& cwd) {
  auto parsed = parse(patch_text);
  if (auto* e = std::get_if<ParseError>(&parsed)) return ApplyResult{1, "", e->cli_display() + "\n"};
  return patch::apply(std::get<Patch>(parsed), cwd);
}

bool all_paths_writable(const Patch& patch, const std::string& cwd,
                        const std::vector<std::string>& writable_roots) {
  std::vector<std::pair<std::string, bool>> roots;  // normalised root, has a .git directory
  for (const auto& r : writable_roots) {
    std::string root = normalize_path(join_path(cwd, r));
    roots.emplace_back(root, is_dir(join_path(root, ".git")));
  }
  auto writable = [&](const std::string& p) {
    std::string abs = normalize_path(join_path(cwd, p));
    for (const auto& [root, has_git] : roots) {
      if (!path_starts_with(abs, root)) continue;
      if (has_git && path_starts_with(abs, join_path(root, ".git"))) continue;
      return true;
    }
    return false;
  };
  for (const auto& h : patch.hunks) {
    if (!writable(h.path)) return false;
    if (h.kind == Hunk::update && h.move_path && !writable(*h.move_path)) return false;
  }
  return true;
}

}  // namespace llmx::patch
