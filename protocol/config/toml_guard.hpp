// Every parse of TOML text we did not write (config.toml, `-c` overrides, config edits from
// clients) goes through parse_toml; never toml::parse directly.
//
// Why: toml++ 3.x (Debian's) asks whether a non-ASCII code point is whitespace in a few places,
// and for the code points its table leaves out (U+00A1-U+0499 among them: Latin-1 letters,
// Greek, Cyrillic) that question reaches __builtin_unreachable, which is undefined behaviour.
// It asks outside strings and comments, right after a backslash in a basic string, and for the
// first character after a multi-line string's line-ending backslash. The guard scans the text
// first: a non-ASCII character outside strings and comments (TOML 1.0 never allows one there) or
// after a backslash (never a valid escape) is a parse error at its place; the one valid case, a
// line-ending backslash followed by a non-ASCII character, gets that character as its \u escape,
// which means the same.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmx {

// What toml++ may be given for a text, and how its positions map back to the text.
struct GuardedToml {
  // Where the guard wrote an escape: `line`, `column` (of both texts: an escape is always the
  // first character after blanks and line breaks, so at most one per line and nothing before it
  // moved), and how many more code points the escape has than the character it stands for.
  struct Escape {
    toml::source_index line = 0, column = 0, extra = 0;
  };
  std::optional<std::string> text;  // nullopt: the text itself
  std::vector<Escape> escapes;

  // A position toml++ reported in `text` as a position in the original text.
  toml::source_position original(toml::source_position p) const;
};

// Scans `text` as described above. Throws toml::parse_error (naming `source`, line and column)
// for the characters no TOML document may hold where they are.
GuardedToml guard_toml_text(std::string_view text, std::string_view source = {});

// toml::parse behind the guard; throws toml::parse_error like it. The positions in the table are
// toml++'s own; they differ from the text's only after an escape on the same line.
toml::table parse_toml(std::string_view text, std::string_view source = {});
// The same, keeping in `guard` what the guard did, for a caller that needs positions in the text
// itself (toml_edit places its edits by them: GuardedToml::original).
toml::table parse_toml(std::string_view text, std::string_view source, GuardedToml& guard);

}  // namespace llmx
