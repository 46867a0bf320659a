// apply_patch (engine.md §8): parsing the patch envelope, locating chunks in files, verifying a
// patch before approval, applying it to disk, recognising it inside shell calls (§5.3 point 3)
// and the "all paths writable" check of the approval table (§7.3). Plain code, no actors.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/core/events.hpp"

namespace llmx::patch {

struct UpdateChunk {
  std::optional<std::string> change_context;  // the `@@ <text>` line, if any
  std::vector<std::string> old_lines, new_lines;
  bool is_end_of_file = false;
};

struct Hunk {
  enum Kind { add, remove, update } kind = add;
  std::string path;                      // exactly as written in the patch
  std::string contents;                  // add: the file content (every line ends with \n)
  std::optional<std::string> move_path;  // update: `*** Move to:` destination as written
  std::vector<UpdateChunk> chunks;       // update
};

struct Patch {
  std::vector<Hunk> hunks;
  // The normalised patch text: heredoc wrapper removed, lines joined with \n (no final \n).
  std::string text;
};

struct ParseError {
  std::string message;
  std::optional<size_t> line;  // set for hunk errors (1-based, `*** Begin Patch` is line 1)
  // Engine-side rendering: "invalid patch: <msg>" / "invalid hunk at line <n>, <msg>".
  std::string display() const;
  // Standalone CLI rendering: "Invalid patch: <msg>" / "Invalid patch hunk on line <n>: <msg>".
  std::string cli_display() const;
};

// A value or an error text.
template <class T>
struct Result {
  std::optional<T> value;
  std::string error;

  static Result ok(T v) { return Result{std::move(v), {}}; }
  static Result fail(std::string e) { return Result{std::nullopt, std::move(e)}; }
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  T& operator*() { return *value; }
  const T* operator->() const { return &*value; }
  T* operator->() { return &*value; }
};

// §8.2, always in lenient mode (heredoc wrapper accepted).
std::variant<Patch, ParseError> parse(std::string_view text);

// §8.3: first index >= start where `pattern` matches `lines`, trying exact, trailing-whitespace
// trimmed, fully trimmed, then unicode-punctuation-normalised comparison. With `eof` only the
// last possible position is tried. An empty pattern matches at `start`.
std::optional<size_t> seek_sequence(const std::vector<std::string>& lines,
                                    const std::vector<std::string>& pattern, size_t start,
                                    bool eof);

// §8.3: the new file content after applying `chunks` to `original`. `display_path` only appears
// in error messages ("Failed to find context ...", "Failed to find expected lines ...").
Result<std::string> apply_chunks(std::string_view original, const std::vector<UpdateChunk>& chunks,
                                 std::string_view display_path);

// Reads `fs_path` and applies the chunks; errors name `display_path`
// ("Failed to read file to update <path>: <io error>").
Result<std::string> derive_new_contents(const std::string& fs_path,
                                        const std::vector<UpdateChunk>& chunks,
                                        std::string_view display_path);

// §8.5 verification before approval. Paths are resolved against `cwd` (the effective cwd);
// every error is the full text the model receives ("apply_patch verification failed: ...").
struct Verified {
  std::map<std::string, FileChange> changes;  // absolute path -> change (later hunks win)
  Patch patch;
  std::string cwd;
};
Result<Verified> verify(const Patch& patch, const std::string& cwd);
// verify() against texts `read` gives (an editor's buffers) instead of the disk.
using ReadText = std::function<Result<std::string>(const std::string& path)>;
Result<Verified> verify(const Patch& patch, const std::string& cwd, const ReadText& read);

// §8.4: applies the hunks in order (not atomic: earlier hunks stay applied after a failure).
// Success: exit 0, stdout "Success. Updated the following files:\nA ..\nM ..\nD ..\n".
// Failure (including zero hunks, "No files were modified."): exit 1, message + "\n" on stderr.
struct ApplyResult {
  int exit_code = 0;
  std::string stdout_text, stderr_text;
};
ApplyResult apply(const Patch& patch, const std::string& cwd);

// Where a patch reads and writes when not straight on disk (an editor that keeps unsaved
// buffers, ACP fs/*): `read` gives a file's text or an error text; `write` and `remove` return an
// error text on failure. Paths are absolute (cwd joined).
struct FileAccess {
  std::function<Result<std::string>(const std::string& path)> read;
  std::function<std::optional<std::string>(const std::string& path, const std::string& content)> write;
  std::function<std::optional<std::string>(const std::string& path)> remove;
};
// apply() through `files`; the messages name paths as written in the patch.
ApplyResult apply(const Patch& patch, const std::string& cwd, const FileAccess& files);

// The absolute paths of the files `patch` reads: those its update and delete hunks name.
std::vector<std::string> files_read(const Patch& patch, const std::string& cwd);

// The standalone CLI (`--llmx-run-as-apply-patch <PATCH>`): parse, then apply; parse errors are
// printed with ParseError::cli_display() and exit code 1.
ApplyResult run_cli(std::string_view patch_text, const std::string& cwd);

// §5.3 point 3 / §8.5: is this shell argv an apply_patch invocation?
//  none  - not a patch; run it as an ordinary command
//  patch - `patch` parsed, to be verified/applied with `cwd` (the effective cwd after `cd`)
//  error - the text the model receives ("apply_patch verification failed: ...")
struct Intercept {
  enum class Kind { none, patch, error } kind = Kind::none;
  Patch patch;
  std::string cwd;
  std::string error;
};
Intercept intercept_shell(const std::vector<std::string>& argv, const std::string& cwd);

// §7.3 (workspace-write): every Add/Delete/Update path and move destination, made absolute
// against `cwd` and lexically normalised, lies under one of `writable_roots` and not under that
// root's `.git` directory (when it exists as a directory).
bool all_paths_writable(const Patch& patch, const std::string& cwd,
                        const std::vector<std::string>& writable_roots);

// A unified diff of two texts as the Rust `similar` crate renders it (Myers + compaction,
// `@@ -a,b +c,d @@` hunks, "\ No newline at end of file" markers), without ---/+++ header.
std::string unified_diff(std::string_view old_text, std::string_view new_text, int context);

// Rust-style path join: an absolute `path` replaces `base`.
std::string join_path(const std::string& base, const std::string& path);

// Lexical normalisation: `.` components removed, `..` pops, duplicate slashes collapsed.
std::string normalize_path(const std::string& path);

}  // namespace llmx::patch
