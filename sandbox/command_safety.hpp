// Command classification for approvals (engine.md §7.5, §7.6): which commands may run without a
// prompt because they only read, and which deserve a prompt even where nothing else would.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmx::sandbox {

// §7.5: argv (every `zsh` element read as `bash`) is a read-only command from the allow-list, or
// `bash -lc <script>` whose script is word-only (bash_parse.hpp) and made only of such commands.
bool is_known_safe_command(const std::vector<std::string>& argv);

// §7.6: `git reset|rm`, `rm -f|-rf`, `sudo <dangerous>`, directly or inside a word-only
// `bash|zsh -lc` script.
bool command_might_be_dangerous(const std::vector<std::string>& argv);

// `^(\d+,)?\d+p$`, the script of `sed -n 5p` or `sed -n 1,5p`: it prints a line range and can
// neither write (`w`) nor execute (`e`).
bool is_sed_print_range(std::string_view script);

}  // namespace llmx::sandbox
