#include "sandbox/exec_env.hpp"

#include <cctype>

#include "protocol/base/secret_env.hpp"

extern char** environ;

namespace llmx::sandbox {
namespace {

constexpr std::string_view kCoreVars[] = {"HOME",     "LOGNAME", "PATH", "SHELL", "USER",
                                          "USERNAME", "TMPDIR",  "TEMP", "TMP"};


bool same_icase(char a, char b) {
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

template <class Patterns>
bool matches_any(const Patterns& patterns, std::string_view name) {
  for (const auto& p : patterns)
    if (glob_match_icase(p, name)) return true;
  return false;
}

}  // namespace

bool glob_match_icase(std::string_view pattern, std::string_view text) {
  // Linear-time backtracking over the last `*` only (the classic wildcard algorithm).
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() &&
        (pattern[p] == '?' || (pattern[p] != '*' && same_icase(pattern[p], text[t])))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

EnvMap build_child_env(const ShellEnvironmentPolicy& policy, const EnvMap& parent,
                       bool network_disabled) {
  EnvMap env;
  if (policy.inherit == "all") {
    env = parent;
  } else if (policy.inherit == "core") {
    for (auto name : kCoreVars)
      if (auto it = parent.find(std::string(name)); it != parent.end()) env.insert(*it);
  }  // "none": start empty
  for (auto it = env.begin(); it != env.end();) {
    // The default excludes: the reference's *KEY*, *SECRET*, *TOKEN*, plus passwords,
    // credentials and URLs with a password (one rule with the server's own, secret_env.hpp).
    const bool drop =
        (!policy.ignore_default_excludes && is_secret_variable(it->first, it->second)) ||
        matches_any(policy.exclude, it->first);
    it = drop ? env.erase(it) : std::next(it);
  }
  for (const auto& [k, v] : policy.set) env[k] = v;
  if (!policy.include_only.empty()) {
    for (auto it = env.begin(); it != env.end();)
      it = matches_any(policy.include_only, it->first) ? std::next(it) : env.erase(it);
  }
  if (network_disabled) env["LLMX_SANDBOX_NETWORK_DISABLED"] = "1";
  return env;
}

EnvMap child_env(const ShellEnvironmentConfig& c, bool network_disabled) {
  ShellEnvironmentPolicy policy{c.inherit, c.ignore_default_excludes, c.exclude, c.set, c.include_only};
  return build_child_env(policy, current_process_env(), network_disabled);
}

EnvMap current_process_env(bool with_sealed) {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  if (with_sealed)
    for (const auto& [k, v] : sealed_env()) env.emplace(k, v);  // still ours, only not in environ
  return env;
}

}  // namespace llmx::sandbox
