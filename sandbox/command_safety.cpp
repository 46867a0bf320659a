#include "sandbox/command_safety.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "sandbox/bash_parse.hpp"

namespace llmx::sandbox {

namespace {

bool any_arg_in(const std::vector<std::string>& argv, std::initializer_list<std::string_view> set) {
  return std::any_of(argv.begin() + 1, argv.end(), [&](const std::string& a) {
    return std::find(set.begin(), set.end(), a) != set.end();
  });
}

// find options that run programs, delete files or write files.
bool find_is_safe(const std::vector<std::string>& argv) {
  return !any_arg_in(argv, {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                            "-fprint0", "-fprintf"});
}

// rg options that run other programs (`--pre`, `--hostname-bin`, decompressors for `-z`).
bool rg_is_safe(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view a = argv[i];
    if (a == "--search-zip" || a == "-z") return false;
    for (std::string_view opt : {"--pre", "--hostname-bin"}) {
      if (a == opt) return false;
      if (a.size() > opt.size() && a.substr(0, opt.size()) == opt && a[opt.size()] == '=')
        return false;
    }
  }
  return true;
}

// Check 1 of §7.5 on a single argv.
bool is_safe_to_call_with_exec(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string_view name = path_basename(argv[0]);
  static constexpr std::array<std::string_view, 13> kAlwaysSafe{
      "cat", "cd", "echo", "false", "grep", "head", "ls", "nl", "pwd", "tail", "true", "wc", "which"};
  if (std::find(kAlwaysSafe.begin(), kAlwaysSafe.end(), name) != kAlwaysSafe.end()) return true;
  if (name == "find") return find_is_safe(argv);
  if (name == "rg") return rg_is_safe(argv);
  if (name == "git") {
    if (argv.size() < 2) return false;
    const auto& sub = argv[1];
    return sub == "branch" || sub == "status" || sub == "log" || sub == "diff" || sub == "show";
  }
  if (name == "cargo") return argv.size() >= 2 && argv[1] == "check";
  if (name == "sed")
    return argv.size() <= 4 && argv.size() >= 3 && argv[1] == "-n" && is_sed_print_range(argv[2]);
  return false;
}

bool is_dangerous_to_call_with_exec(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string_view prog = argv[0];
  // "ends with git", as the reference: covers /usr/bin/git.
  if (prog.size() >= 3 && prog.substr(prog.size() - 3) == "git")
    return argv.size() >= 2 && (argv[1] == "reset" || argv[1] == "rm");
  std::string_view name = path_basename(prog);
  if (name == "rm") return argv.size() >= 2 && (argv[1] == "-f" || argv[1] == "-rf");
  // Recurse through the full check, so `sudo bash -lc "rm -rf x"` counts too.
  if (name == "sudo") return command_might_be_dangerous({argv.begin() + 1, argv.end()});
  return false;
}

}  // namespace

bool is_sed_print_range(std::string_view s) {
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (s.empty() || s.back() != 'p') return false;
  s.remove_suffix(1);
  auto comma = s.find(',');
  if (comma == std::string_view::npos) return digits(s);
  return digits(s.substr(0, comma)) && digits(s.substr(comma + 1));
}

bool is_known_safe_command(const std::vector<std::string>& argv) {
  std::vector<std::string> cmd = argv;
  std::replace(cmd.begin(), cmd.end(), std::string("zsh"), std::string("bash"));
  if (is_safe_to_call_with_exec(cmd)) return true;
  auto script = extract_shell_script(cmd);
  if (!script) return false;
  auto commands = parse_word_only_commands(*script);
  // An empty script never gets here: the parser returns nullopt when there is no command.
  return commands && std::all_of(commands->begin(), commands->end(), is_safe_to_call_with_exec);
}

bool command_might_be_dangerous(const std::vector<std::string>& argv) {
  if (is_dangerous_to_call_with_exec(argv)) return true;
  auto script = extract_shell_script(argv);
  if (!script) return false;
  auto commands = parse_word_only_commands(*script);
  return commands &&
         std::any_of(commands->begin(), commands->end(), is_dangerous_to_call_with_exec);
}

}  // namespace llmx::sandbox
