// The optional file tools of DECISIONS E9 (engine.md §5.7) as plain code: `read_file` (a slice
// of lines, or the indented block around a line), `list_dir` (a depth-limited listing) and the
// command line and output of `grep_files` (which runs ripgrep through the sandbox like any
// command). Arguments are parsed here; every error is the text the model sees.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmx::file_tools {

struct Output {
  std::string text;
  bool success = false;
};

// read_file: {file_path (absolute), offset = 1, limit = 2000, mode = slice | indentation,
// indentation: {anchor_line, max_levels = 0, include_siblings = false, include_header = true,
// max_lines}}. Lines come back as `L<n>: <text>`, each cut to 500 bytes.
// Indentation mode shows the anchor's block: the anchor and its body (the lines below indented
// deeper, and a closing `}`/`end` line), or for a line that opens none the run of neighbours at
// its indentation; with include_siblings the whole body of the block around it. Above that, the
// header lines of the enclosing blocks (max_levels of them, 0 = all) and, with include_header,
// the comments and decorators right above the shown lines.
Output read_file(std::string_view arguments);

// list_dir: {dir_path (absolute), offset = 1, limit = 25, depth = 2}.
Output list_dir(std::string_view arguments);

// grep_files: {pattern, include?, path?, limit = 100 (at most 2000)}. The command to run (in
// `cwd` unless `path` says otherwise), or the error for the model.
struct GrepCommand {
  std::vector<std::string> argv;
  size_t limit = 100;
  std::optional<std::string> error;
};
GrepCommand grep_command(std::string_view arguments, const std::string& cwd);
// ripgrep's answer as the tool output: the paths (at most `limit`), `No matches found.` when
// there are none (success false), or its error.
Output grep_output(int exit_code, const std::string& stdout_text, const std::string& stderr_text, size_t limit);

}  // namespace llmx::file_tools
