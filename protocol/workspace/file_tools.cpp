#include "protocol/workspace/file_tools.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "protocol/base/files.hpp"
#include "protocol/base/json_codec.hpp"

namespace llmx::file_tools {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxLineBytes = 500;
constexpr uintmax_t kMaxFileBytes = 64u << 20;

struct IndentationArgs {
  std::optional<int64_t> anchor_line;
  int64_t max_levels = 0;  // parents to include; 0 = all of them
  bool include_siblings = false;
  bool include_header = true;
  std::optional<int64_t> max_lines;
  LLMX_FIELDS(v("anchor_line", s.anchor_line); v("max_levels", s.max_levels, Field::defaulted);
              v("include_siblings", s.include_siblings, Field::defaulted);
              v("include_header", s.include_header, Field::defaulted); v("max_lines", s.max_lines))
};

struct ReadFileArgs {
  std::string file_path;
  int64_t offset = 1;
  int64_t limit = 2000;
  std::string mode = "slice";
  std::optional<IndentationArgs> indentation;
  LLMX_FIELDS(v("file_path", s.file_path); v("offset", s.offset, Field::defaulted); v("limit", s.limit, Field::defaulted);
              v("mode", s.mode, Field::defaulted); v("indentation", s.indentation))
};

struct ListDirArgs {
  std::string dir_path;
  int64_t offset = 1;
  int64_t limit = 25;
  int64_t depth = 2;
  LLMX_FIELDS(v("dir_path", s.dir_path); v("offset", s.offset, Field::defaulted); v("limit", s.limit, Field::defaulted);
              v("depth", s.depth, Field::defaulted))
};

struct GrepArgs {
  std::string pattern;
  std::optional<std::string> include;
  std::optional<std::string> path;
  int64_t limit = 100;
  LLMX_FIELDS(v("pattern", s.pattern); v("include", s.include); v("path", s.path);
              v("limit", s.limit, Field::defaulted))
};

template <class T>
std::optional<std::string> parse(std::string_view text, T& out) {
  try {
    out = json::parse_as<T>(text);
    return std::nullopt;
  } catch (const json::DecodeError& e) {
    return fmt::format("failed to parse function arguments: {}", e.what());
  }
}

Output fail(std::string text) { return {std::move(text), false}; }

std::vector<std::string> split_lines(const std::string& content) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < content.size()) {
    auto nl = content.find('\n', start);
    auto end = nl == std::string::npos ? content.size() : nl;
    std::string line = content.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// `L<n>: <text>` with the text cut to 500 bytes (at a character boundary).
std::string numbered(size_t n, const std::string& line) {
  size_t cut = std::min(line.size(), kMaxLineBytes);
  while (cut < line.size() && cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("L{}: {}", n, std::string_view(line).substr(0, cut));
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }

// Indentation width (a tab counts as 4).
size_t indent(const std::string& s) {
  size_t w = 0;
  for (char c : s) {
    if (c == ' ')
      ++w;
    else if (c == '\t')
      w += 4;
    else
      break;
  }
  return w;
}

bool is_closer(const std::string& s) {
  auto t = s.substr(s.find_first_not_of(" \t") == std::string::npos ? s.size() : s.find_first_not_of(" \t"));
  return !t.empty() && (t[0] == '}' || t[0] == ']' || t[0] == ')' || t.rfind("end", 0) == 0);
}

bool is_header_line(const std::string& s) {
  auto p = s.find_first_not_of(" \t");
  if (p == std::string::npos) return false;
  auto t = std::string_view(s).substr(p);
  return t.starts_with("#") || t.starts_with("//") || t.starts_with("/*") || t.starts_with("*") ||
         t.starts_with("@") || t.starts_with("--") || t.starts_with("\"\"\"");
}

// The last line (0-based) of the block that line `x` opens: the lines after it that are indented
// deeper (blank lines inside count), and a closing line at its own indentation.
size_t end_of_block(const std::vector<std::string>& lines, size_t x) {
  size_t base = indent(lines[x]);
  size_t last = x;
  for (size_t i = x + 1; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    if (indent(lines[i]) > base) {
      last = i;
      continue;
    }
    if (indent(lines[i]) == base && is_closer(lines[i])) last = i;
    break;
  }
  return last;
}

Output read_indentation(const std::vector<std::string>& lines, const ReadFileArgs& args) {
  IndentationArgs ind = args.indentation.value_or(IndentationArgs{});
  int64_t anchor_1 = ind.anchor_line.value_or(args.offset);
  if (anchor_1 < 1 || static_cast<size_t>(anchor_1) > lines.size())
    return fail(fmt::format("anchor_line {} is beyond the end of the file ({} lines)", anchor_1, lines.size()));
  size_t anchor = static_cast<size_t>(anchor_1 - 1);
  while (anchor + 1 < lines.size() && blank(lines[anchor])) ++anchor;  // a blank anchor: the next code
  // Parents: each line above with less indentation than the last one found.
  std::vector<size_t> parents;
  size_t current = indent(lines[anchor]);
  for (size_t i = anchor; i-- > 0;) {
    if (blank(lines[i]) || indent(lines[i]) >= current) continue;
    parents.push_back(i);
    current = indent(lines[i]);
    if (ind.max_levels > 0 && parents.size() >= static_cast<size_t>(ind.max_levels)) break;
    if (current == 0) break;
  }
  std::set<size_t> keep(parents.begin(), parents.end());
  size_t first = anchor, last = end_of_block(lines, anchor);
  // A line that opens no block: the run of neighbouring lines at its indentation or deeper.
  auto widen = [&](size_t base) {
    while (first > 0 && (blank(lines[first - 1]) || indent(lines[first - 1]) >= base)) --first;
    while (last + 1 < lines.size() && (blank(lines[last + 1]) || indent(lines[last + 1]) >= base)) ++last;
    while (first < anchor && blank(lines[first])) ++first;
    while (last > anchor && blank(lines[last])) --last;
  };
  if (last == anchor && !ind.include_siblings) widen(indent(lines[anchor]));
  if (ind.include_siblings) {
    if (!parents.empty()) {
      first = parents.front() + 1;
      last = end_of_block(lines, parents.front());
    } else {  // top level: the contiguous code at the anchor's indentation or deeper
      widen(indent(lines[anchor]));
    }
  }
  for (size_t i = first; i <= last; ++i) keep.insert(i);
  if (ind.include_header) {  // comments, docstrings and decorators right above what is shown
    std::vector<size_t> starts(parents.begin(), parents.end());
    starts.push_back(first);
    for (auto s : starts)
      for (size_t i = s; i-- > 0 && is_header_line(lines[i]);) keep.insert(i);
  }
  auto max = static_cast<size_t>(std::max<int64_t>(1, ind.max_lines.value_or(args.limit)));
  std::string out;
  size_t n = 0;
  for (auto i : keep) {
    if (n++ == max) break;
    if (!out.empty()) out += '\n';
    out += numbered(i + 1, lines[i]);
  }
  return {std::move(out), true};
}

}  // namespace

Output read_file(std::string_view arguments) {
  ReadFileArgs args;
  if (auto err = parse(arguments, args)) return fail(*err);
  if (!fs::path(args.file_path).is_absolute()) return fail("file_path must be an absolute path");
  if (args.offset < 1) return fail("offset must be a 1-indexed line number");
  if (args.limit < 1) return fail("limit must be greater than zero");
  if (args.mode != "slice" && args.mode != "indentation")
    return fail(fmt::format("unknown mode `{}`: use slice or indentation", args.mode));
  // Only regular files, and not huge ones: a FIFO would block and /dev/zero never ends.
  std::error_code ec;
  auto status = fs::status(args.file_path, ec);
  if (!ec && fs::exists(status) && !fs::is_regular_file(status))
    return fail(fmt::format("failed to read file: {} is not a regular file", args.file_path));
  if (auto size = fs::file_size(args.file_path, ec); !ec && size > kMaxFileBytes)
    return fail(fmt::format("failed to read file: it has {} bytes, more than read_file reads ({} MiB)", size,
                            kMaxFileBytes >> 20));
  int error = 0;
  auto content = files::read(args.file_path, &error);
  if (!content) return fail(fmt::format("failed to read file: {}", std::strerror(error)));
  auto lines = split_lines(*content);
  if (args.mode == "indentation") return read_indentation(lines, args);
  if (static_cast<size_t>(args.offset) > lines.size()) return fail("offset exceeds file length");
  std::string out;
  auto end = std::min(lines.size(), static_cast<size_t>(args.offset - 1 + args.limit));
  for (size_t i = static_cast<size_t>(args.offset - 1); i < end; ++i) {
    if (!out.empty()) out += '\n';
    out += numbered(i + 1, lines[i]);
  }
  return {std::move(out), true};
}

Output list_dir(std::string_view arguments) {
  ListDirArgs args;
  if (auto err = parse(arguments, args)) return fail(*err);
  if (!fs::path(args.dir_path).is_absolute()) return fail("dir_path must be an absolute path");
  if (args.offset < 1) return fail("offset must be a 1-indexed entry number");
  if (args.limit < 1) return fail("limit must be greater than zero");
  if (args.depth < 1) return fail("depth must be greater than zero");
  std::error_code ec;
  if (!fs::is_directory(args.dir_path, ec)) return fail(fmt::format("failed to read directory: {} is not a directory", args.dir_path));
  // Entries depth-first, sorted by name per directory; symlinks are shown, never followed. The
  // walk stops one entry past the page (that one says there are more), so `/` costs a page.
  std::vector<std::string> entries;
  const auto wanted = static_cast<size_t>(args.offset - 1 + args.limit + 1);
  auto walk = [&](auto&& self, const fs::path& dir, int64_t level) -> void {
    std::vector<fs::directory_entry> children;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec))
      children.push_back(*it);
    std::sort(children.begin(), children.end(),
              [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
    for (const auto& child : children) {
      if (entries.size() >= wanted) return;
      std::error_code e;
      auto st = child.symlink_status(e);
      std::string suffix = fs::is_symlink(st) ? "@" : fs::is_directory(st) ? "/" : fs::is_regular_file(st) ? "" : "?";
      entries.push_back(std::string(static_cast<size_t>(2 * level), ' ') + child.path().filename().string() + suffix);
      if (fs::is_directory(st) && level + 1 < args.depth) self(self, child.path(), level + 1);
    }
  };
  walk(walk, args.dir_path, 0);
  std::string out = "Absolute path: " + args.dir_path;
  auto begin = static_cast<size_t>(args.offset - 1);
  if (begin > entries.size() || (begin == entries.size() && begin > 0)) return fail("offset exceeds directory entry count");
  auto end = std::min(entries.size(), begin + static_cast<size_t>(args.limit));
  for (size_t i = begin; i < end; ++i) out += "\n" + entries[i];
  if (end < entries.size()) out += fmt::format("\nMore than {} entries found", args.limit);
  return {std::move(out), true};
}

GrepCommand grep_command(std::string_view arguments, const std::string& cwd) {
  GrepArgs args;
  GrepCommand cmd;
  if (auto err = parse(arguments, args)) {
    cmd.error = *err;
    return cmd;
  }
  if (args.pattern.empty()) {
    cmd.error = "pattern must not be empty";
    return cmd;
  }
  if (args.limit < 1) {
    cmd.error = "limit must be greater than zero";
    return cmd;
  }
  cmd.limit = static_cast<size_t>(std::min<int64_t>(args.limit, 2000));
  std::string path = args.path ? args.path->empty() ? cwd : *args.path : cwd;
  if (!fs::path(path).is_absolute()) path = (fs::path(cwd) / path).lexically_normal().string();
  cmd.argv = {"rg", "--files-with-matches", "--sortr=modified", "--regexp", args.pattern, "--no-messages"};
  if (args.include && !args.include->empty()) {
    cmd.argv.push_back("--glob");
    cmd.argv.push_back(*args.include);
  }
  cmd.argv.push_back("--");
  cmd.argv.push_back(path);
  return cmd;
}

Output grep_output(int exit_code, const std::string& stdout_text, const std::string& stderr_text, size_t limit) {
  if (exit_code == 1 || (exit_code == 0 && stdout_text.empty())) return fail("No matches found.");
  if (exit_code != 0)
    return fail(fmt::format("grep_files failed (exit code {}): {}", exit_code, stderr_text.empty() ? stdout_text : stderr_text));
  std::string out;
  size_t n = 0;
  for (const auto& line : split_lines(stdout_text)) {
    if (line.empty()) continue;
    if (n++ == limit) break;
    if (!out.empty()) out += '\n';
    out += line;
  }
  return {std::move(out), true};
}

}  // namespace llmx::file_tools
