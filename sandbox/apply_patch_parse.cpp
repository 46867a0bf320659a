// The apply_patch parser (engine.md §8.2), always in lenient mode.
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/apply_patch.hpp"
#include "sandbox/apply_patch_util.hpp"

namespace llmx::patch {

namespace {

constexpr std::string_view kBegin = "*** Begin Patch";
constexpr std::string_view kEnd = "*** End Patch";
constexpr std::string_view kAdd = "*** Add File: ";
constexpr std::string_view kCreate = "*** Create File: ";  // alias of Add
constexpr std::string_view kDelete = "*** Delete File: ";
constexpr std::string_view kUpdate = "*** Update File: ";
constexpr std::string_view kMove = "*** Move to: ";
constexpr std::string_view kEof = "*** End of File";
constexpr std::string_view kNoLines = "Update hunk does not contain any lines";

using Lines = std::vector<std::string_view>;

bool strip_prefix(std::string_view s, std::string_view prefix, std::string_view& rest) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  rest = s.substr(prefix.size());
  return true;
}

ParseError patch_error(std::string msg) { return ParseError{std::move(msg), std::nullopt}; }
ParseError hunk_error(std::string msg, size_t line) { return ParseError{std::move(msg), line}; }

// Both markers must match exactly; the first-line error wins when both are wrong.
std::optional<ParseError> check_boundaries(const Lines& lines) {
  if (!lines.empty() && lines.front() == kBegin && lines.back() == kEnd) return std::nullopt;
  if (!lines.empty() && lines.front() != kBegin)
    return patch_error("The first line of the patch must be '*** Begin Patch'");
  return patch_error("The last line of the patch must be '*** End Patch'");
}

// Lenient mode: a patch wrapped in `<<EOF ... EOF` (as some models send it to a non-shell argv)
// is checked again without the wrapper. Returns the lines from Begin to End inclusive.
std::variant<Lines, ParseError> patch_lines(const Lines& lines) {
  auto err = check_boundaries(lines);
  if (!err) return lines;
  if (lines.size() >= 4) {
    std::string_view first = lines.front(), last = lines.back();
    bool heredoc = first == "<<EOF" || first == "<<'EOF'" || first == "<<\"EOF\"";
    bool ends = last.size() >= 3 && last.substr(last.size() - 3) == "EOF";
    if (heredoc && ends) {
      Lines inner(lines.begin() + 1, lines.end() - 1);
      if (auto inner_err = check_boundaries(inner)) return *inner_err;
      return inner;
    }
  }
  return *err;
}

struct ChunkParse {
  UpdateChunk chunk;
  size_t consumed = 0;
};

// One `@@` chunk starting at lines[0] (numbered `line`). Without an `@@` marker the chunk is only
// accepted as the first chunk of a file.
std::variant<ChunkParse, ParseError> parse_chunk(const Lines& lines, size_t from, size_t line,
                                                 bool allow_missing_context) {
  ChunkParse out;
  size_t start = from;
  std::string_view first = lines[from], ctx;
  if (first == "@@") {
    start = from + 1;
  } else if (strip_prefix(first, "@@ ", ctx)) {
    out.chunk.change_context = std::string(ctx);
    start = from + 1;
  } else if (!allow_missing_context) {
    return hunk_error(
        "Expected update hunk to start with a @@ context marker, got: '" + std::string(first) + "'",
        line);
  }
  if (start >= lines.size()) return hunk_error(std::string(kNoLines), line + 1);

  size_t body = 0;  // body lines consumed
  for (size_t i = start; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (l == kEof) {
      if (body == 0) return hunk_error(std::string(kNoLines), line + 1);
      out.chunk.is_end_of_file = true;
      ++body;
      break;
    }
    if (l.empty()) {
      // A bare empty line is an empty context line (editors strip the leading space).
      out.chunk.old_lines.emplace_back();
      out.chunk.new_lines.emplace_back();
    } else if (l[0] == ' ') {
      out.chunk.old_lines.emplace_back(l.substr(1));
      out.chunk.new_lines.emplace_back(l.substr(1));
    } else if (l[0] == '+') {
      out.chunk.new_lines.emplace_back(l.substr(1));
    } else if (l[0] == '-') {
      out.chunk.old_lines.emplace_back(l.substr(1));
    } else {
      if (body == 0)
        return hunk_error("Unexpected line found in update hunk: '" + std::string(l) +
                              "'. Every line should start with ' ' (context line), '+' (added "
                              "line), or '-' (removed line)",
                          line + 1);
      break;  // the start of the next chunk or hunk
    }
    ++body;
  }
  out.consumed = body + (start - from);
  return out;
}

struct HunkParse {
  Hunk hunk;
  size_t consumed = 0;
};

std::variant<HunkParse, ParseError> parse_hunk(const Lines& lines, size_t from, size_t line) {
  // Headers tolerate surrounding whitespace.
  std::string_view first = util::trim(lines[from]), path;
  HunkParse out;
  if (strip_prefix(first, kAdd, path) || strip_prefix(first, kCreate, path)) {
    out.hunk.kind = Hunk::add;
    out.hunk.path = std::string(path);
    size_t i = from + 1;
    for (; i < lines.size() && !lines[i].empty() && lines[i][0] == '+'; ++i) {
      out.hunk.contents.append(lines[i].substr(1));
      out.hunk.contents.push_back('\n');
    }
    out.consumed = i - from;
    return out;
  }
  if (strip_prefix(first, kDelete, path)) {
    out.hunk.kind = Hunk::remove;
    out.hunk.path = std::string(path);
    out.consumed = 1;
    return out;
  }
  if (strip_prefix(first, kUpdate, path)) {
    out.hunk.kind = Hunk::update;
    out.hunk.path = std::string(path);
    size_t i = from + 1;
    std::string_view dest;
    if (i < lines.size() && strip_prefix(lines[i], kMove, dest)) {  // not trimmed
      out.hunk.move_path = std::string(dest);
      ++i;
    }
    while (i < lines.size()) {
      if (util::trim(lines[i]).empty()) {  // blank separators between chunks
        ++i;
        continue;
      }
      if (lines[i].substr(0, 3) == "***") break;
      auto chunk = parse_chunk(lines, i, line + (i - from), out.hunk.chunks.empty());
      if (auto* e = std::get_if<ParseError>(&chunk)) return *e;
      auto& c = std::get<ChunkParse>(chunk);
      out.hunk.chunks.push_back(std::move(c.chunk));
      i += c.consumed;
    }
    if (out.hunk.chunks.empty())
      return hunk_error("Update file hunk for path '" + std::string(path) + "' is empty", line);
    out.consumed = i - from;
    return out;
  }
  std::string msg = "'";
  msg += first;
  msg +=
      "' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Create "
      "File: {path}', '*** Delete File: {path}', '*** Update File: {path}'";
  return hunk_error(std::move(msg), line);
}

}  // namespace

std::string ParseError::display() const {
  if (line) return "invalid hunk at line " + std::to_string(*line) + ", " + message;
  return "invalid patch: " + message;
}

std::string ParseError::cli_display() const {
  if (line) return "Invalid patch hunk on line " + std::to_string(*line) + ": " + message;
  return "Invalid patch: " + message;
}

std::variant<Patch, ParseError> parse(std::string_view text) {
  std::string_view body = util::trim(text);
  Lines lines;
  if (!body.empty()) {
    size_t pos = 0;
    for (;;) {
      size_t nl = body.find('\n', pos);
      if (nl == std::string_view::npos) {
        lines.push_back(body.substr(pos));
        break;
      }
      lines.push_back(body.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  auto bounded = patch_lines(lines);
  if (auto* e = std::get_if<ParseError>(&bounded)) return *e;
  const Lines& all = std::get<Lines>(bounded);

  Patch patch;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i) patch.text.push_back('\n');
    patch.text.append(all[i]);
  }
  // Hunks live between the markers; the Begin line is line 1.
  Lines inner(all.begin() + 1, all.end() - 1);
  size_t i = 0, line = 2;
  while (i < inner.size()) {
    auto h = parse_hunk(inner, i, line);
    if (auto* e = std::get_if<ParseError>(&h)) return *e;
    auto& hp = std::get<HunkParse>(h);
    patch.hunks.push_back(std::move(hp.hunk));
    i += hp.consumed;
    line += hp.consumed;
  }
  return patch;
}

}  // namespace llmx::patch
