#include "protocol/config/toml_edit.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "protocol/config/toml_guard.hpp"

namespace llmx::toml_edit {

namespace {

using Path = std::vector<std::string>;

bool has_prefix(const Path& p, const Path& prefix) {
  return p.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), p.begin());
}

Path take(const Path& p, size_t n) { return Path(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n)); }
Path drop(const Path& p, size_t n) { return Path(p.begin() + static_cast<std::ptrdiff_t>(n), p.end()); }

bool is_bare(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// Reads a dotted key starting at s[i] (bare, "basic" or 'literal' parts), leaving i after it.
Path parse_key(std::string_view s, size_t& i) {
  Path parts;
  auto skip_space = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  while (true) {
    skip_space();
    if (i >= s.size()) throw EditError("expected a key");
    std::string part;
    if (s[i] == '"') {
      // Find the closing quote (skipping escaped characters), then let toml++ decode the escapes.
      size_t end = i + 1;
      while (end < s.size() && s[end] != '"' && s[end] != '\n') end += s[end] == '\\' ? 2 : 1;
      if (end >= s.size() || s[end] != '"') throw EditError("unterminated quoted key");
      try {
        auto t = parse_toml(std::string("_x_ = ").append(s.substr(i, end + 1 - i)));
        part = t["_x_"].value_or(std::string());
      } catch (const toml::parse_error& e) {
        throw EditError(fmt::format("bad quoted key: {}", e.description()));
      }
      i = end + 1;
    } else if (s[i] == '\'') {
      auto end = s.find('\'', i + 1);
      if (end == std::string_view::npos) throw EditError("unterminated quoted key");
      part = std::string(s.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      size_t b = i;
      while (i < s.size() && is_bare(s[i])) ++i;
      if (i == b) throw EditError(fmt::format("expected a key, got `{}`", s.substr(b)));
      part = std::string(s.substr(b, i - b));
    }
    parts.push_back(std::move(part));
    skip_space();
    if (i < s.size() && s[i] == '.') {
      ++i;
      continue;
    }
    return parts;
  }
}

bool is_table_array(const toml::node& n) {
  auto* a = n.as_array();
  if (!a || a->empty()) return false;
  for (auto& e : *a)
    if (!e.is_table() || e.as_table()->is_inline()) return false;
  return true;
}

// `_x_ = <value>` parsed; throws EditError unless it is exactly one TOML value.
toml::table parse_value(std::string_view value) {
  toml::table t;
  try {
    t = parse_toml(std::string("_x_ = ").append(value));
  } catch (const toml::parse_error& e) {
    throw EditError(fmt::format("not a TOML value: `{}` ({})", value, e.description()));
  }
  if (t.size() != 1) throw EditError(fmt::format("not a single TOML value: `{}`", value));
  return t;
}

// A node as JSON text, so values can be compared whatever their TOML spelling.
std::string canonical(const toml::node& n) {
  toml::table wrapper;
  wrapper.insert_or_assign("_x_", n);
  std::ostringstream s;
  s << toml::json_formatter(wrapper);
  return s.str();
}

struct Leaf {
  Path path;
  size_t begin_line = 0, end_line = 0;  // 1-based: the key's line and the value's last line
  size_t key_off = 0, value_off = 0, value_end = 0;
  bool in_inline = false;      // somewhere inside an inline table
  bool direct_inline = false;  // an entry of an inline table itself
};

struct Header {
  size_t line = 0;
  Path path;
  bool array = false;  // [[...]]
};

struct Replacement {
  size_t off = 0, len = 0;
  std::string text;
};

// The parsed document with the positions the edits need.
class Doc {
 public:
  explicit Doc(std::string_view text) : text_(text) {
    try {
      root_ = parse_toml(text, {}, guard_);
    } catch (const toml::parse_error& e) {
      auto at = guard_.original(e.source().begin);
      throw EditError(fmt::format("{}:{}: {}", at.line, at.column, e.description()));
    }
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    auto nl = text.find('\n');
    if (nl != std::string_view::npos && nl > 0 && text[nl - 1] == '\r') eol_ = "\r\n";
    collect(root_, {}, false, false);
    scan_headers();
  }

  const std::string& eol() const { return eol_; }
  std::string_view text() const { return text_; }

  const toml::node* find(const Path& p) const {
    const toml::node* cur = &root_;
    for (const auto& part : p) {
      auto* t = cur->as_table();
      if (!t) return nullptr;
      cur = t->get(part);
      if (!cur) return nullptr;
    }
    return cur;
  }
  const Leaf* leaf(const Path& p) const {
    for (const auto& l : leaves_)
      if (l.path == p) return &l;
    return nullptr;
  }
  const Header* header(const Path& p) const {
    for (const auto& h : headers_)
      if (!h.array && h.path == p) return &h;
    return nullptr;
  }
  bool is_inline_table(const Path& p) const {
    auto* n = find(p);
    return n && n->is_table() && n->as_table()->is_inline();
  }
  // The longest prefix of `p` (length >= 1) naming an inline table.
  std::optional<Path> inline_ancestor(const Path& p) const {
    for (size_t n = p.size(); n >= 1; --n)
      if (is_inline_table(take(p, n))) return take(p, n);
    return std::nullopt;
  }

  size_t line_count() const { return line_starts_.size(); }
  size_t line_start(size_t line) const {
    return line - 1 < line_starts_.size() ? line_starts_[line - 1] : text_.size();
  }
  size_t next_line_start(size_t line) const { return line_start(line + 1); }
  std::string_view line_text(size_t line) const {
    auto s = line_start(line), e = next_line_start(line);
    auto l = text_.substr(s, e - s);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.remove_suffix(1);
    return l;
  }
  std::string_view trimmed_line(size_t line) const {
    auto l = line_text(line);
    auto b = l.find_first_not_of(" \t");
    return b == std::string_view::npos ? std::string_view() : l.substr(b);
  }
  // Inside a value that spans lines (a multi-line string or array), past its first line.
  bool inside_value(size_t line) const {
    for (const auto& l : leaves_)
      if (l.begin_line < line && line <= l.end_line) return true;
    return false;
  }
  bool is_comment(size_t line) const { return !inside_value(line) && trimmed_line(line).starts_with("#"); }
  bool is_blank(size_t line) const { return !inside_value(line) && trimmed_line(line).empty(); }

  // The section of a header: its line + 1 up to the line before the next header.
  size_t section_end(size_t header_line) const {
    for (const auto& h : headers_)
      if (h.line > header_line) return h.line - 1;
    return line_count();
  }
  size_t root_end() const { return headers_.empty() ? line_count() : headers_.front().line - 1; }
  // The last line of a key/value statement beginning in [first, last]; 0 when there is none.
  size_t last_statement_line(size_t first, size_t last) const {
    size_t out = 0;
    for (const auto& l : leaves_)
      if (!l.in_inline && l.begin_line >= first && l.begin_line <= last) out = std::max(out, l.end_line);
    return out;
  }
  // The first of the comment lines directly above `line` (or `line` itself).
  size_t attached_comments(size_t line) const {
    while (line > 1 && is_comment(line - 1)) --line;
    return line;
  }
  // The header whose section holds `line` (nullptr for the root section).
  const Header* owner_of_line(size_t line) const {
    const Header* out = nullptr;
    for (const auto& h : headers_)
      if (h.line <= line) out = &h;
    return out;
  }
  // For a table made by dotted keys, the header (or root: empty path) of the section holding
  // them; nullopt when the table has no dotted keys of its own.
  std::optional<Path> dotted_owner(const Path& p) const {
    for (const auto& l : leaves_) {
      if (l.in_inline || !has_prefix(l.path, p) || l.path.size() == p.size()) continue;
      auto* h = owner_of_line(l.begin_line);
      if (!h) return Path{};
      if (!has_prefix(h->path, p)) return h->path;
    }
    return std::nullopt;
  }
  const std::vector<Leaf>& leaves() const { return leaves_; }
  const std::vector<Header>& headers() const { return headers_; }

 private:
  // Byte offset of a toml++ position (columns count code points; the guard's escapes do not).
  size_t offset(toml::source_position pos) const {
    pos = guard_.original(pos);
    size_t off = line_start(pos.line);
    for (uint32_t c = 1; c < pos.column && off < text_.size(); ++c) {
      auto b = static_cast<unsigned char>(text_[off]);
      off += b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
    }
    return std::min(off, text_.size());
  }

  void collect(const toml::table& t, const Path& prefix, bool in_inline, bool direct_inline) {
    for (auto&& [k, v] : t) {
      Path p = prefix;
      p.emplace_back(k.str());
      if (auto* sub = v.as_table(); sub && !sub->is_inline()) {
        collect(*sub, p, in_inline, false);
        continue;
      }
      if (is_table_array(v)) {
        for (auto& e : *v.as_array()) collect(*e.as_table(), p, in_inline, false);
        continue;
      }
      Leaf l;
      l.path = p;
      l.begin_line = k.source().begin.line ? k.source().begin.line : v.source().begin.line;
      l.end_line = v.source().end.line;
      l.key_off = offset(k.source().begin.line ? k.source().begin : v.source().begin);
      l.value_off = offset(v.source().begin);
      l.value_end = offset(v.source().end);
      l.in_inline = in_inline;
      l.direct_inline = direct_inline;
      leaves_.push_back(l);
      if (auto* sub = v.as_table()) collect(*sub, p, true, true);
    }
  }

  void scan_headers() {
    for (size_t line = 1; line <= line_count(); ++line) {
      if (inside_value(line)) continue;
      auto l = trimmed_line(line);
      if (!l.starts_with("[")) continue;
      Header h;
      h.line = line;
      h.array = l.starts_with("[[");
      size_t i = h.array ? 2 : 1;
      try {
        h.path = parse_key(l, i);
      } catch (const EditError&) {
        continue;
      }
      headers_.push_back(std::move(h));
    }
  }

  std::string_view text_;
  GuardedToml guard_;  // toml++ read guard_.text where it is set
  toml::table root_;
  std::vector<size_t> line_starts_;
  std::string eol_ = "\n";
  std::vector<Leaf> leaves_;
  std::vector<Header> headers_;
};

std::string apply(std::string_view text, std::vector<Replacement> edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.off < b.off; });
  std::string out;
  size_t pos = 0;
  for (const auto& e : edits) {
    if (e.off < pos) throw EditError("overlapping edits");
    out.append(text.substr(pos, e.off - pos));
    out += e.text;
    pos = e.off + e.len;
  }
  out.append(text.substr(std::min(pos, text.size())));
  return out;
}

// Text appended at the very end: after a line break, separated from earlier content by a blank line.
Replacement append_at_end(const Doc& d, const std::string& content) {
  auto text = d.text();
  std::string prefix;
  bool all_space = text.find_first_not_of(" \t\r\n") == std::string_view::npos;
  if (!text.empty() && text.back() != '\n') prefix += d.eol();
  if (!all_space && !std::string(text).append(prefix).ends_with(d.eol() + d.eol())) prefix += d.eol();
  return {text.size(), 0, prefix + content};
}

Replacement insert_after_line(const Doc& d, size_t line, const std::string& content) {
  size_t off = d.next_line_start(line);
  auto text = d.text();
  std::string prefix = off == text.size() && !text.empty() && text.back() != '\n' ? d.eol() : "";
  return {off, 0, prefix + content};
}

std::string table_text(const Doc& d, const Path& p, const Entries& entries) {
  std::string out = "[" + join_key(p) + "]" + d.eol();
  for (const auto& [k, v] : entries) out += join_key({k}) + " = " + v + d.eol();
  return out;
}

// Adds `key = value` (key relative to the inline table at `table`) between its braces.
Replacement insert_into_inline(const Doc& d, const Path& table, const Path& key, std::string_view value) {
  const Leaf* l = d.leaf(table);
  auto text = d.text();
  if (!l || l->value_end == 0 || text[l->value_end - 1] != '}') throw EditError("cannot locate the inline table");
  size_t close = l->value_end - 1;
  size_t j = close;
  while (j > l->value_off + 1 && (text[j - 1] == ' ' || text[j - 1] == '\t')) --j;
  std::string stmt = join_key(key) + " = " + std::string(value);
  if (text[j - 1] == '{') return {l->value_off + 1, close - l->value_off - 1, " " + stmt + " "};
  return {j, 0, ", " + stmt};
}

// Inserts `key = value` for a path that does not exist yet.
Replacement insert_new(const Doc& d, const Path& p, std::string_view value) {
  size_t depth = 0;
  for (; depth < p.size(); ++depth) {
    auto* n = d.find(take(p, depth + 1));
    if (!n) break;
    if (!n->is_table())
      throw EditError(
          fmt::format("`{}` is {}, not a table", join_key(take(p, depth + 1)), n->is_array() ? "an array" : "a value"));
  }
  Path parent = take(p, depth);
  if (auto q = d.inline_ancestor(parent)) return insert_into_inline(d, *q, drop(p, q->size()), value);
  std::string leaf_stmt = join_key({p.back()}) + " = " + std::string(value) + d.eol();
  if (depth + 1 == p.size()) {
    std::optional<Path> owner;
    if (parent.empty() || d.header(parent))
      owner = parent;
    else
      owner = d.dotted_owner(parent);
    if (owner && owner->empty()) {
      std::string stmt = join_key(p) + " = " + std::string(value) + d.eol();
      if (size_t last = d.last_statement_line(1, d.root_end())) return insert_after_line(d, last, stmt);
      if (d.headers().empty()) return insert_after_line(d, d.line_count(), stmt);
      // No top-level keys yet: before the first header and the comments that describe it.
      size_t line = d.attached_comments(d.headers().front().line);
      return {d.line_start(line), 0, stmt + d.eol()};
    }
    if (owner) {
      const Header* h = d.header(*owner);
      std::string stmt = join_key(drop(p, owner->size())) + " = " + std::string(value) + d.eol();
      size_t last = d.last_statement_line(h->line + 1, d.section_end(h->line));
      return insert_after_line(d, last ? last : h->line, stmt);
    }
  }
  return append_at_end(d, table_text(d, take(p, p.size() - 1), {}) + leaf_stmt);
}

// Replacement that deletes whole lines [first, last].
Replacement delete_lines(const Doc& d, size_t first, size_t last) {
  size_t off = d.line_start(first);
  return {off, d.next_line_start(last) - off, ""};
}

// Deletes one entry of an inline table with the comma that separated it.
Replacement delete_inline_entry(const Doc& d, const Leaf& l) {
  Path parent = take(l.path, l.path.size() - 1);
  auto* parent_table = d.find(parent)->as_table();
  if (parent_table->size() == 1) {
    const Leaf* pl = d.leaf(parent);
    return {pl->value_off, pl->value_end - pl->value_off, "{}"};
  }
  auto text = d.text();
  size_t b = l.key_off, e = l.value_end;
  size_t f = e;
  while (f < text.size() && (text[f] == ' ' || text[f] == '\t')) ++f;
  if (f < text.size() && text[f] == ',') {
    e = f + 1;
    while (e < text.size() && (text[e] == ' ' || text[e] == '\t')) ++e;
  } else {
    size_t g = b;
    while (g > 0 && (text[g - 1] == ' ' || text[g - 1] == '\t')) --g;
    if (g > 0 && text[g - 1] == ',') b = g - 1;
  }
  return {b, e - b, ""};
}

// Everything that defines the table at `p`: the blocks of its headers and of its sub-tables'
// headers (with the comments above them), and its dotted-key lines elsewhere. The section of
// the header at `keep_header_line` (if any) is left alone.
std::vector<Replacement> delete_table(const Doc& d, const Path& p, std::optional<size_t> keep_header_line) {
  std::vector<std::pair<size_t, size_t>> lines, kept;  // inclusive line ranges
  const auto& hs = d.headers();
  for (size_t i = 0; i < hs.size(); ++i) {
    if (!has_prefix(hs[i].path, p)) continue;
    size_t last = i + 1 < hs.size() ? d.attached_comments(hs[i + 1].line) - 1 : d.line_count();
    if (hs[i].line == keep_header_line) {
      kept.emplace_back(hs[i].line, last);
      continue;
    }
    size_t first = d.attached_comments(hs[i].line);
    if (last == d.line_count())
      while (first > 1 && d.is_blank(first - 1)) --first;  // no blank lines left dangling at the end
    lines.emplace_back(first, last);
  }
  auto covered = [&](size_t line) {
    for (const auto* ranges : {&lines, &kept})
      for (auto [a, b] : *ranges)
        if (line >= a && line <= b) return true;
    return false;
  };
  for (const auto& l : d.leaves())
    if (!l.in_inline && has_prefix(l.path, p) && !covered(l.begin_line)) lines.emplace_back(l.begin_line, l.end_line);
  std::sort(lines.begin(), lines.end());
  std::vector<std::pair<size_t, size_t>> merged;
  for (auto [a, b] : lines) {
    if (!merged.empty() && a <= merged.back().second)
      merged.back().second = std::max(merged.back().second, b);
    else
      merged.emplace_back(a, b);
  }
  std::vector<Replacement> out;
  for (auto [a, b] : merged) out.push_back(delete_lines(d, a, b));
  return out;
}

void check_set(const std::string& out, const Path& p, const toml::node& expected) {
  Doc after(out);
  auto* n = after.find(p);
  if (!n || canonical(*n) != canonical(expected))
    throw EditError(fmt::format("could not set `{}` without restructuring the file", join_key(p)));
}

void check_absent(const std::string& out, const Path& p) {
  Doc after(out);
  if (after.find(p)) throw EditError(fmt::format("could not remove `{}` without restructuring the file", join_key(p)));
}

std::string remove_path(std::string_view text, std::string_view path, bool table) {
  Path p = split_key(path);
  Doc d(text);
  auto* n = d.find(p);
  if (!n) return std::string(text);
  bool real_table = (n->is_table() && !n->as_table()->is_inline()) || is_table_array(*n);
  if (table && !n->is_table() && !is_table_array(*n)) throw EditError(fmt::format("`{}` is not a table", join_key(p)));
  std::vector<Replacement> edits;
  if (real_table) {
    if (d.inline_ancestor(p))
      throw EditError(fmt::format("cannot remove `{}` from inside an inline table", join_key(p)));
    edits = delete_table(d, p, std::nullopt);
  } else {
    const Leaf* l = d.leaf(p);
    if (!l) throw EditError(fmt::format("cannot locate `{}`", join_key(p)));
    if (l->direct_inline)
      edits.push_back(delete_inline_entry(d, *l));
    else if (l->in_inline)
      throw EditError(fmt::format("cannot remove `{}` from inside an inline table", join_key(p)));
    else
      edits.push_back(delete_lines(d, l->begin_line, l->end_line));
  }
  std::string out = apply(text, std::move(edits));
  check_absent(out, p);
  return out;
}

}  // namespace

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
          out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quote(items[i]);
  return out + "]";
}

std::string inline_table(const Entries& entries) {
  if (entries.empty()) return "{}";
  std::string out = "{ ";
  for (size_t i = 0; i < entries.size(); ++i)
    out += (i ? ", " : "") + join_key({entries[i].first}) + " = " + entries[i].second;
  return out + " }";
}

std::vector<std::string> split_key(std::string_view dotted) {
  size_t i = 0;
  auto parts = parse_key(dotted, i);
  if (i != dotted.size()) throw EditError(fmt::format("malformed key `{}`", dotted));
  return parts;
}

std::string join_key(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += '.';
    bool bare = !part.empty() && std::all_of(part.begin(), part.end(), is_bare);
    out += bare ? part : quote(part);
  }
  return out;
}

bool contains(std::string_view text, std::string_view path) { return Doc(text).find(split_key(path)) != nullptr; }

std::string set_value(std::string_view text, std::string_view path, std::string_view value) {
  Path p = split_key(path);
  toml::table expected = parse_value(value);
  Doc d(text);
  Replacement edit;
  if (auto* n = d.find(p)) {
    if ((n->is_table() && !n->as_table()->is_inline()) || is_table_array(*n))
      throw EditError(fmt::format("`{}` is a table; use set_table", join_key(p)));
    const Leaf* l = d.leaf(p);
    if (!l) throw EditError(fmt::format("cannot locate `{}`", join_key(p)));
    edit = {l->value_off, l->value_end - l->value_off, std::string(value)};
  } else {
    edit = insert_new(d, p, value);
  }
  std::string out = apply(text, {edit});
  check_set(out, p, *expected.get("_x_"));
  return out;
}

std::string remove_value(std::string_view text, std::string_view path) { return remove_path(text, path, false); }

std::string remove_table(std::string_view text, std::string_view path) { return remove_path(text, path, true); }

std::string set_table(std::string_view text, std::string_view path, const Entries& entries) {
  Path p = split_key(path);
  std::string inline_text = inline_table(entries);
  toml::table expected = parse_value(inline_text);
  Doc d(text);
  auto* n = d.find(p);
  if (n && !n->is_table()) throw EditError(fmt::format("`{}` is not a table", join_key(p)));
  // Inside (or as) an inline table, the table is a value.
  if (d.inline_ancestor(p) || (!n && d.inline_ancestor(take(p, p.size() - 1))))
    return set_value(text, path, inline_text);
  std::string section = table_text(d, p, entries);
  std::string out;
  if (const Header* h = n ? d.header(p) : nullptr) {
    // In place: the header line through its last key line; sub-tables go.
    auto edits = delete_table(d, p, h->line);
    size_t last = d.last_statement_line(h->line + 1, d.section_end(h->line));
    size_t off = d.line_start(h->line);
    size_t end = d.next_line_start(std::max(last, h->line));
    std::string text_with_eol = section;
    if (end == text.size() && !text.empty() && text.back() != '\n')
      text_with_eol.resize(text_with_eol.size() - d.eol().size());
    edits.push_back({off, end - off, text_with_eol});
    out = apply(text, std::move(edits));
  } else if (n) {
    std::string removed = apply(text, delete_table(d, p, std::nullopt));
    Doc rd(removed);
    out = apply(removed, {append_at_end(rd, section)});
  } else {
    out = apply(text, {append_at_end(d, section)});
  }
  check_set(out, p, *expected.get("_x_"));
  return out;
}

}  // namespace llmx::toml_edit
