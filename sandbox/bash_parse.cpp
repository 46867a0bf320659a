#include "sandbox/bash_parse.hpp"

#include <algorithm>
#include <array>

namespace llmx::sandbox {

namespace {

// Words that start control flow or change how the rest is read when they come first.
constexpr std::array<std::string_view, 17> kReservedWords{
    "if",   "then",   "else",   "elif",   "fi",     "for",  "while",  "until", "do",
    "done", "case",   "esac",   "function", "select", "time", "coproc", "in"};

// Unquoted characters that introduce syntax outside the subset: redirections, subshells and
// groups, expansions, escapes, globs and history/negation. Rejecting them all is what keeps the
// words we extract identical to the argv bash would run.
bool is_forbidden_unquoted(char c) {
  switch (c) {
    case '<': case '>': case '(': case ')': case '{': case '}': case '$': case '`':
    case '\\': case '*': case '?': case '[': case ']': case '!':
      return true;
    default:
      return false;
  }
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_operator_char(char c) { return c == ';' || c == '&' || c == '|' || c == '\n'; }

// `NAME=...` as a command's first word is an assignment, not a program name.
bool is_assignment(std::string_view w) {
  auto eq = w.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  auto ok_first = [](char c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (!ok_first(w[0])) return false;
  return std::all_of(w.begin() + 1, w.begin() + eq, [&](char c) {
    return ok_first(c) || (c >= '0' && c <= '9');
  });
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<std::vector<Pipeline>> run() {
    while (true) {
      while (pos_ < s_.size() && is_blank(s_[pos_])) ++pos_;
      if (pos_ >= s_.size()) break;
      char c = s_[pos_];
      if (c == '\n') {
        ++pos_;
        // After `&&`, `||` or `|` bash keeps reading on the next line; blank lines are no-ops.
        if (pending_ == Pending::none && !words_.empty() && !end_pipeline()) return std::nullopt;
        continue;
      }
      if (c == ';') {
        ++pos_;
        // `;` needs a command before it: rejects `; ls`, `ls;;`, `ls && ;`.
        if (words_.empty() || !end_pipeline()) return std::nullopt;
        continue;
      }
      if (c == '&') {
        if (pos_ + 1 < s_.size() && s_[pos_ + 1] == '&') {
          pos_ += 2;
          if (!end_pipeline()) return std::nullopt;
          pending_ = Pending::list;
          continue;
        }
        return std::nullopt;  // background job or `&>` redirection
      }
      if (c == '|') {
        bool is_or = pos_ + 1 < s_.size() && s_[pos_ + 1] == '|';
        if (!is_or && pos_ + 1 < s_.size() && s_[pos_ + 1] == '&') return std::nullopt;  // `|&`
        pos_ += is_or ? 2 : 1;
        if (is_or ? !end_pipeline() : !end_command()) return std::nullopt;
        pending_ = is_or ? Pending::list : Pending::pipe;
        continue;
      }
      if (!read_word()) return std::nullopt;
    }
    // A dangling operator (`ls &&`, `ls |`) is a syntax error.
    if (pending_ != Pending::none) return std::nullopt;
    if (!words_.empty() && !end_pipeline()) return std::nullopt;
    if (pipelines_.empty()) return std::nullopt;
    return std::move(pipelines_);
  }

 private:
  enum class Pending { none, list, pipe };

  // Closes the current simple command; false when there is none (operator without command).
  bool end_command() {
    if (words_.empty()) return false;
    current_.push_back(std::move(words_));
    words_.clear();
    return true;
  }

  bool end_pipeline() {
    if (!end_command()) return false;
    pipelines_.push_back(std::move(current_));
    current_.clear();
    return true;
  }

  // Reads one word. A word is exactly one of: a plain run of characters, a '...' string, or a
  // "..." string. Mixed forms (`a"b"`, `'a''b'`) are concatenations, which the reference's node
  // whitelist also rejects.
  bool read_word() {
    std::string word;
    bool quoted = false;
    char c = s_[pos_];
    if (c == '\'') {
      auto end = s_.find('\'', pos_ + 1);
      if (end == std::string_view::npos) return false;
      word.assign(s_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      quoted = true;
    } else if (c == '"') {
      if (!read_double_quoted(word)) return false;
      quoted = true;
    } else {
      if (c == '#') return false;  // a comment
      while (pos_ < s_.size()) {
        char d = s_[pos_];
        if (is_blank(d) || is_operator_char(d)) break;
        if (d == '\'' || d == '"') return false;  // concatenation
        if (is_forbidden_unquoted(d)) return false;
        word.push_back(d);
        ++pos_;
      }
    }
    // The next character must end the word (blank, operator or end of input).
    if (quoted && pos_ < s_.size() && !is_blank(s_[pos_]) && !is_operator_char(s_[pos_]))
      return false;
    if (words_.empty() && !quoted) {
      if (is_assignment(word)) return false;
      if (std::find(kReservedWords.begin(), kReservedWords.end(), word) != kReservedWords.end())
        return false;
    }
    words_.push_back(std::move(word));
    pending_ = Pending::none;
    return true;
  }

  // Inside double quotes bash still expands `$` and backticks, and a backslash escapes `$`, `` ` ``,
  // `"`, `\` and newline; those are rejected. Any other backslash is literal, as in bash.
  bool read_double_quoted(std::string& out) {
    ++pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '$' || c == '`') return false;
      if (c == '\\' && pos_ + 1 < s_.size()) {
        char n = s_[pos_ + 1];
        if (n == '$' || n == '`' || n == '"' || n == '\\' || n == '\n') return false;
      }
      out.push_back(c);
      ++pos_;
    }
    return false;  // unterminated
  }

  std::string_view s_;
  size_t pos_ = 0;
  Words words_;
  Pipeline current_;
  std::vector<Pipeline> pipelines_;
  Pending pending_ = Pending::none;
};

}  // namespace

std::optional<std::vector<Pipeline>> parse_word_only_pipelines(std::string_view script) {
  return Parser(script).run();
}

std::optional<std::vector<Words>> parse_word_only_commands(std::string_view script) {
  auto pipelines = parse_word_only_pipelines(script);
  if (!pipelines) return std::nullopt;
  std::vector<Words> out;
  for (auto& p : *pipelines)
    for (auto& cmd : p) out.push_back(std::move(cmd));
  return out;
}

std::string_view path_basename(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<std::string> extract_shell_script(const std::vector<std::string>& argv) {
  if (argv.size() != 3 || argv[1] != "-lc") return std::nullopt;
  auto shell = path_basename(argv[0]);
  if (shell != "bash" && shell != "zsh") return std::nullopt;
  return argv[2];
}

}  // namespace llmx::sandbox
