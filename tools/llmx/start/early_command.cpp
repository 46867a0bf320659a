#include "early_command.hpp"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/base/reflect.hpp"

namespace llmx::cli {

namespace {

// Reads one option at argv[i] (`-x VALUE`, `--name VALUE` or `--name=VALUE`) when it is one of
// `names`; advances i past it. A separate value that starts with '-' is left to the real parser.
bool take(int argc, const char* const* argv, int& i, std::initializer_list<std::string_view> names, std::string& value) {
  const std::string_view arg = argv[i];
  for (auto name : names) {
    if (arg == name) {
      if (i + 1 >= argc || std::string_view(argv[i + 1]).starts_with('-')) return false;
      value = argv[i + 1];
      i += 2;
      return true;
    }
    if (name.starts_with("--") && arg.size() > name.size() + 1 && arg.starts_with(name) && arg[name.size()] == '=') {
      value = arg.substr(name.size() + 1);
      i += 1;
      return true;
    }
  }
  return false;
}

// A single-valued option given once, its value valid.
template <class T>
bool set_once(std::optional<T>& field, std::optional<T> value) {
  if (field || !value) return false;
  field = std::move(value);
  return true;
}

}  // namespace

std::optional<EarlyCommand> early_command(int argc, const char* const* argv) {
  EarlyCommand out{};
  int i = 1;
  std::vector<std::string> global;
  std::string value;
  while (i < argc && take(argc, argv, i, {"-c", "--config"}, value)) global.push_back(value);
  if (i >= argc) return std::nullopt;
  const std::string_view sub = argv[i++];
  if (sub == "mcp-server") out.front = Front::mcp;
  else if (sub == "app-server") out.front = Front::app;
  else if (sub == "acp") out.front = Front::acp;
  else return std::nullopt;
  auto& o = out.overrides;
  while (i < argc) {
    if (take(argc, argv, i, {"-c", "--config"}, value)) {
      o.cli_overrides.push_back(value);
    } else if (take(argc, argv, i, {"-s", "--sandbox"}, value)) {
      if (!set_once(o.sandbox_mode, enum_from_name<SandboxMode>(value))) return std::nullopt;
    } else if (take(argc, argv, i, {"-a", "--ask-for-approval"}, value)) {
      if (!set_once(o.approval_policy, enum_from_name<AskForApproval>(value))) return std::nullopt;
    } else if (take(argc, argv, i, {"-m", "--model"}, value)) {
      if (!set_once(o.model, std::optional{value})) return std::nullopt;
    } else if (take(argc, argv, i, {"-p", "--profile"}, value)) {
      if (!set_once(o.profile, std::optional{value})) return std::nullopt;
    } else if (take(argc, argv, i, {"-C", "--cd"}, value)) {
      if (!set_once(o.cwd, std::optional{value})) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  o.cli_overrides.insert(o.cli_overrides.begin(), global.begin(), global.end());
  return out;
}

}  // namespace llmx::cli
