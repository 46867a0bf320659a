#include "sandbox/parse_command.hpp"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "sandbox/bash_parse.hpp"
#include "sandbox/command_safety.hpp"

namespace llmx::sandbox {

namespace {

using Flags = std::initializer_list<std::string_view>;

bool in(std::string_view s, Flags set) { return std::find(set.begin(), set.end(), s) != set.end(); }

// Options that take their value as the next word, per tool; all other `-x` words are switches.
const Flags kHeadTailValueFlags = {"-n", "-c", "--lines", "--bytes"};
const Flags kNlValueFlags = {"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"};
const Flags kLsValueFlags = {"-I", "-w", "-T", "--block-size", "--format", "--time-style",
                                 "--quoting-style", "--hide", "--ignore", "--sort", "--width",
                                 "--tabsize", "--indicator-style"};
const Flags kTreeValueFlags = {"-L", "-P", "-I", "-o", "-H", "-T", "--filelimit", "--charset",
                                   "--sort"};
const Flags kGrepValueFlags = {"-f", "--file", "-m", "--max-count", "-A", "-B", "-C",
                                   "--context", "--after-context", "--before-context", "-d",
                                   "--directories", "-D", "--devices", "--include", "--exclude",
                                   "--exclude-dir", "--exclude-from", "--label"};
const Flags kRgValueFlags = {"-f", "--file", "-m", "--max-count", "-A", "-B", "-C", "--context",
                                 "--after-context", "--before-context", "-g", "--glob", "--iglob",
                                 "-t", "--type", "-T", "--type-not", "--type-add", "-j", "--threads",
                                 "-M", "--max-columns", "-d", "--max-depth", "--sort", "--sortr",
                                 "--color", "--colors", "--pre", "--pre-glob", "--ignore-file", "-r",
                                 "--replace", "-E", "--encoding", "--max-filesize", "--engine",
                                 "--path-separator"};
const Flags kAgValueFlags = {"-A", "-B", "-C", "--context", "-G", "--file-search-regex",
                                 "--ignore", "--ignore-dir", "-m", "--max-count", "--depth", "-p",
                                 "--path-to-ignore", "-W", "--width"};

// The operands of a command's arguments: words that are not options nor option values.
// `pattern` receives the value of `-e`/`--regexp` when `with_pattern_flag` is set.
std::vector<std::string> operands(const Words& args, Flags value_flags,
                                  std::optional<std::string>* pattern = nullptr) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (pattern && (a == "-e" || a == "--regexp")) {
      if (i + 1 < args.size() && !*pattern) *pattern = args[i + 1];
      ++i;
      continue;
    }
    if (pattern && a.rfind("--regexp=", 0) == 0) {
      if (!*pattern) *pattern = a.substr(9);
      continue;
    }
    if (in(a, value_flags)) {
      ++i;
      continue;
    }
    if (a.size() > 1 && a[0] == '-') continue;
    out.push_back(a);
  }
  return out;
}

std::string basename_of(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path_basename(path));
}

Flags value_flags_for_reader(std::string_view name) {
  if (name == "head" || name == "tail") return kHeadTailValueFlags;
  if (name == "nl") return kNlValueFlags;
  return {};
}

bool is_reader(std::string_view name) {
  return in(name, {"cat", "head", "tail", "less", "more", "nl"});
}

ParsedCommand search(std::string cmd, const Words& args, Flags value_flags) {
  std::optional<std::string> pattern;
  auto ops = operands(args, value_flags, &pattern);
  ParsedSearch s{std::move(cmd), {}, {}};
  size_t path_index = 1;
  if (pattern) {
    s.query = *pattern;
    path_index = 0;
  } else if (!ops.empty()) {
    s.query = ops[0];
  }
  if (ops.size() > path_index) s.path = ops[path_index];
  return s;
}

ParsedCommand list_files(std::string cmd, std::optional<std::string> path) {
  ParsedListFiles l{std::move(cmd), {}};
  if (path) l.path = std::move(*path);
  return l;
}

std::optional<std::string> first(const std::vector<std::string>& v) {
  if (v.empty()) return std::nullopt;
  return v.front();
}

ParsedCommand classify(const Words& words) {
  std::string cmd = shell_join(words);
  std::string_view name = path_basename(words[0]);
  Words args(words.begin() + 1, words.end());

  if (is_reader(name)) {
    auto ops = operands(args, value_flags_for_reader(name));
    // One named file is a read; several files or stdin are not worth a guess.
    if (ops.size() == 1 && ops[0] != "-") return ParsedRead{cmd, basename_of(ops[0]), ops[0]};
    return ParsedUnknown{cmd};
  }
  if (name == "sed" && words.size() == 4 && words[1] == "-n" && is_sed_print_range(words[2]))
    return ParsedRead{cmd, basename_of(words[3]), words[3]};
  if (name == "ls") return list_files(cmd, first(operands(args, kLsValueFlags)));
  if (name == "tree") return list_files(cmd, first(operands(args, kTreeValueFlags)));
  if (name == "find") {
    // The starting points come before the first expression word.
    std::optional<std::string> path;
    if (!args.empty() && !args[0].empty() && args[0][0] != '-' && args[0] != "(" && args[0] != "!") path = args[0];
    return list_files(cmd, path);
  }
  if (name == "rg") {
    if (std::find(args.begin(), args.end(), "--files") != args.end())
      return list_files(cmd, first(operands(args, kRgValueFlags)));
    return search(cmd, args, kRgValueFlags);
  }
  if (name == "grep" || name == "egrep" || name == "fgrep") return search(cmd, args, kGrepValueFlags);
  if (name == "ag") return search(cmd, args, kAgValueFlags);
  if (name == "git" && args.size() >= 1 && args[0] == "grep")
    return search(cmd, Words(args.begin() + 1, args.end()), kGrepValueFlags);
  return ParsedUnknown{cmd};
}

// A later pipeline stage that only reshapes the stream adds nothing to the summary.
bool is_trivial_filter(const Words& words) {
  std::string_view name = path_basename(words[0]);
  if (in(name, {"wc", "sort", "uniq", "cut", "tr", "column"})) return true;
  if (is_reader(name)) {
    Words args(words.begin() + 1, words.end());
    return operands(args, value_flags_for_reader(name)).empty();
  }
  return false;
}

// What a UI shows for a shell wrapper: accepts `-c` too (exec_command uses it when login=false)
// and `sh`, since this only describes the command.
std::optional<std::string> display_script(const std::vector<std::string>& argv) {
  if (argv.size() != 3 || (argv[1] != "-lc" && argv[1] != "-c")) return std::nullopt;
  std::string_view shell = path_basename(argv[0]);
  if (shell != "bash" && shell != "zsh" && shell != "sh") return std::nullopt;
  return argv[2];
}

std::string_view cmd_of(const ParsedCommand& p) {
  return std::visit([](const auto& x) -> std::string_view { return x.cmd; }, p.value);
}

}  // namespace

std::string shell_quote(std::string_view word) {
  auto plain = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\"'\"'";
    else
      out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out.push_back(' ');
    out += shell_quote(argv[i]);
  }
  return out;
}

std::vector<ParsedCommand> parse_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return {};
  auto script = display_script(argv);
  if (!script) return {classify(argv)};
  auto pipelines = parse_word_only_pipelines(*script);
  if (!pipelines) return {ParsedUnknown{*script}};
  std::vector<ParsedCommand> out;
  for (const Pipeline& p : *pipelines) {
    for (size_t i = 0; i < p.size(); ++i) {
      if (i > 0 && is_trivial_filter(p[i])) continue;
      ParsedCommand c = classify(p[i]);
      // Same text means same classification: `ls && ls` is one listing.
      if (!out.empty() && out.back().kind() == c.kind() && cmd_of(out.back()) == cmd_of(c)) continue;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace llmx::sandbox
