// Best-effort description of a command for UIs (engine.md §6.2 `parsed_cmd`): which files it
// reads, which directory it lists, what it searches for. Never used for safety decisions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/core/events.hpp"

namespace llmx::sandbox {

using llmx::ParsedCommand;

// One entry per meaningful command: `bash -lc` word-only scripts are split into their commands
// (trivial stream filters after a `|`, like `head -n 5` or `wc -l`, are dropped; consecutive
// duplicates are merged); a script outside the word-only subset is one `unknown` with the script
// as its text. Empty argv gives an empty list.
std::vector<ParsedCommand> parse_command(const std::vector<std::string>& argv);

// POSIX shell quoting of one word: unchanged when made only of [A-Za-z0-9_@%+=:,./-] (and not
// empty), else single-quoted with `'` written as `'"'"'`.
std::string shell_quote(std::string_view word);

// The words quoted with shell_quote and joined by spaces: how argv is shown to people.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace llmx::sandbox
