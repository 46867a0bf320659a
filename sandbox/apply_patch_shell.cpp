// Recognising apply_patch inside shell calls (engine.md §5.3 point 3, §8.5).
//
// The reference implementation matches a bash syntax tree against two whole-script shapes:
//   apply_patch <<'EOF' ... EOF
//   cd <dir> && apply_patch <<'EOF' ... EOF
// This is a small hand-written recogniser for exactly those shapes. Anything it does not
// understand is "not a patch" and runs as an ordinary command (where the apply_patch binary on
// PATH still applies it), so erring on the side of `none` is safe.
#include <algorithm>
#include <string>
#include <string_view>

#include "sandbox/apply_patch.hpp"

namespace llmx::patch {

namespace {

constexpr std::string_view kImplicit =
    "apply_patch verification failed: patch detected without explicit call to apply_patch. "
    "Rerun as [\"apply_patch\", \"<patch>\"]";
constexpr std::string_view kVerifyFailed = "apply_patch verification failed: ";

bool is_apply_patch_name(std::string_view s) { return s == "apply_patch" || s == "applypatch"; }

bool parses(std::string_view text) { return std::holds_alternative<Patch>(parse(text)); }

struct Cursor {
  std::string_view s;
  size_t i = 0;

  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  bool eat(std::string_view lit) {
    if (s.substr(i, lit.size()) != lit) return false;
    i += lit.size();
    return true;
  }
  void skip_blanks() {  // spaces and tabs
    while (!done() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  void skip_space() {  // blanks and newlines
    while (!done() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  }
};

// A plain word: no quoting, expansion, globbing or operator characters (those would make the
// literal text differ from what bash passes to the command).
bool word_char(char c) {
  static constexpr std::string_view kSpecial = " \t\n;&|<>()$`'\"\\*?[]{}~#!";
  return kSpecial.find(c) == std::string_view::npos;
}

std::optional<std::string> read_word(Cursor& c) {
  size_t start = c.i;
  while (!c.done() && word_char(c.peek())) ++c.i;
  if (c.i == start) return std::nullopt;
  return std::string(c.s.substr(start, c.i - start));
}

// The `cd` argument: a word, a 'raw string' or a "string" without expansions or escapes.
std::optional<std::string> read_cd_arg(Cursor& c) {
  char q = c.peek();
  if (q == '\'' || q == '"') {
    size_t close = c.s.find(q, c.i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view inner = c.s.substr(c.i + 1, close - c.i - 1);
    if (q == '"' && (inner.empty() || inner.find_first_of("$`\\") != std::string_view::npos))
      return std::nullopt;
    c.i = close + 1;
    return std::string(inner);
  }
  return read_word(c);
}

// The heredoc delimiter: WORD, 'WORD' or "WORD".
std::optional<std::string> read_delimiter(Cursor& c) {
  char q = c.peek();
  if (q == '\'' || q == '"') {
    size_t close = c.s.find(q, c.i + 1);
    if (close == std::string_view::npos || close == c.i + 1) return std::nullopt;
    std::string_view inner = c.s.substr(c.i + 1, close - c.i - 1);
    for (char ch : inner)
      if (!word_char(ch)) return std::nullopt;
    c.i = close + 1;
    return std::string(inner);
  }
  return read_word(c);
}

struct Extracted {
  std::string body;
  std::optional<std::string> cd;
};

// Parses "[cd DIR &&] apply_patch <<DELIM\n BODY \nDELIM" with nothing else in the script.
std::optional<Extracted> extract_heredoc(std::string_view script) {
  Cursor c{script};
  Extracted out;
  c.skip_space();
  auto first = read_word(c);
  if (!first) return std::nullopt;
  if (*first == "cd") {
    if (c.peek() != ' ' && c.peek() != '\t') return std::nullopt;
    c.skip_blanks();
    out.cd = read_cd_arg(c);
    if (!out.cd) return std::nullopt;
    c.skip_blanks();
    if (!c.eat("&&")) return std::nullopt;
    c.skip_space();
    first = read_word(c);
    if (!first) return std::nullopt;
  }
  if (!is_apply_patch_name(*first)) return std::nullopt;
  c.skip_blanks();
  if (!c.eat("<<")) return std::nullopt;
  bool strip_tabs = c.eat("-");
  c.skip_blanks();
  auto delim = read_delimiter(c);
  if (!delim) return std::nullopt;
  c.skip_blanks();
  if (!c.eat("\n")) return std::nullopt;  // nothing else may follow on the command line

  // Body: every line up to the one that is exactly the delimiter.
  size_t body_start = c.i, pos = c.i;
  for (;;) {
    if (pos > script.size()) return std::nullopt;  // unterminated heredoc
    size_t nl = script.find('\n', pos);
    size_t end = nl == std::string_view::npos ? script.size() : nl;
    std::string_view line = script.substr(pos, end - pos);
    if (strip_tabs) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
    if (line == *delim) {
      out.body = std::string(script.substr(body_start, pos - body_start));
      c.i = end;
      break;
    }
    if (nl == std::string_view::npos) return std::nullopt;
    pos = nl + 1;
  }
  c.skip_space();
  if (!c.done()) return std::nullopt;  // a further statement: not the recognised shape
  while (!out.body.empty() && out.body.back() == '\n') out.body.pop_back();
  return out;
}

Intercept from_parse(std::string_view body, std::string cwd) {
  Intercept r;
  auto parsed = parse(body);
  if (auto* e = std::get_if<ParseError>(&parsed)) {
    r.kind = Intercept::Kind::error;
    r.error = std::string(kVerifyFailed) + e->display();
    return r;
  }
  r.kind = Intercept::Kind::patch;
  r.patch = std::move(std::get<Patch>(parsed));
  r.cwd = std::move(cwd);
  return r;
}

}  // namespace

Intercept intercept_shell(const std::vector<std::string>& argv, const std::string& cwd) {
  bool bash_lc = argv.size() == 3 && argv[0] == "bash" && argv[1] == "-lc";
  // A bare patch as the whole command is a mistake worth telling the model about.
  if ((argv.size() == 1 && parses(argv[0])) || (bash_lc && parses(argv[2]))) {
    Intercept r;
    r.kind = Intercept::Kind::error;
    r.error = std::string(kImplicit);
    return r;
  }
  if (argv.size() == 2 && is_apply_patch_name(argv[0])) return from_parse(argv[1], cwd);
  if (bash_lc) {
    auto ex = extract_heredoc(argv[2]);
    if (!ex) return {};
    return from_parse(ex->body, ex->cd ? join_path(cwd, *ex->cd) : cwd);
  }
  return {};
}

}  // namespace llmx::patch
