// A hand-written parser for the "word-only" subset of bash (engine.md §7.5, §7.6): scripts made
// solely of simple commands whose words are plain words, single-quoted strings or plain
// double-quoted strings, joined by `&&`, `||`, `;`, `|` (and newlines, which bash reads as `;`).
// Anything that could make the executed command differ from the words we see (redirections,
// expansions, globs, subshells, assignments, control flow, background jobs) makes the whole
// script unparseable, so callers fall back to the cautious answer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmx::sandbox {

using Words = std::vector<std::string>;
// Commands joined by `|`; a script is a list of pipelines joined by `&&`, `||`, `;`, newline.
using Pipeline = std::vector<Words>;

// The pipelines of a word-only script, in order; nullopt when the script uses anything outside
// the subset or contains no command at all.
std::optional<std::vector<Pipeline>> parse_word_only_pipelines(std::string_view script);

// The same, flattened: every simple command of the script in order.
std::optional<std::vector<Words>> parse_word_only_commands(std::string_view script);

// The script of `[bash|zsh|<path>/bash|<path>/zsh, "-lc", script]` (exactly three elements).
std::optional<std::string> extract_shell_script(const std::vector<std::string>& argv);

// The final path component of `path` (`/usr/bin/git` → `git`).
std::string_view path_basename(std::string_view path);

}  // namespace llmx::sandbox
