// Comment-preserving edits of a TOML document. The original text is parsed with toml++ only to
// learn where keys, values and table headers are; an edit then changes just the bytes of the
// value, statement or table it is about, so comments, blank lines, key order, quoting and line
// endings (LF or CRLF) of everything else stay byte-for-byte as they were.
//
// Placement of new things: a missing key goes after the last key/value line of its table's
// section (for top-level keys: before the first table header); a key whose table does not exist
// yet gets a new `[table]` header at the end of the file; a key inside an inline table is added
// between its braces. Paths are TOML dotted keys (`profiles.fast.model`,
// `projects."/home/u/repo".trust_level`). Values are TOML value text (`"o3"`, `true`,
// `["a", "b"]`, `{ K = "v" }`); quote() and friends build it.
//
// Every edit re-parses its result and checks the change took effect; a document with a syntax
// error, or an edit that would make one, throws EditError and nothing is returned to write.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmx::toml_edit {

struct EditError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Key/value pairs of a table: key (one part, quoted when needed) → TOML value text.
using Entries = std::vector<std::pair<std::string, std::string>>;

// Building value text.
std::string quote(std::string_view s);                            // "a \"basic\" string"
std::string string_array(const std::vector<std::string>& items);  // ["a", "b"]
std::string inline_table(const Entries& entries);                 // { a = 1, b = "x" }

// Dotted keys: "a.\"b.c\".d" <-> {"a", "b.c", "d"}. split_key throws EditError when malformed.
std::vector<std::string> split_key(std::string_view dotted);
std::string join_key(const std::vector<std::string>& parts);

// Whether the document has something at `path`. Throws EditError on a syntax error.
bool contains(std::string_view text, std::string_view path);

// Sets the value at `path` (replacing just the old value's text, or inserting a new line).
// `path` must not name a table defined by a header; use set_table for those.
std::string set_value(std::string_view text, std::string_view path, std::string_view value);

// Removes the key/value statement at `path` (the whole line(s), or the entry of an inline table).
// Unchanged text when there is nothing at `path`.
std::string remove_value(std::string_view text, std::string_view path);

// Replaces the table at `path` by `[path]` with `entries` (in place when it had a header of its
// own, else appended at the end), or writes it into an enclosing inline table as an inline table.
std::string set_table(std::string_view text, std::string_view path, const Entries& entries);

// Removes the table at `path` with its sub-tables, its header and the comment lines directly
// above the header. Unchanged text when there is no such table.
std::string remove_table(std::string_view text, std::string_view path);

}  // namespace llmx::toml_edit
