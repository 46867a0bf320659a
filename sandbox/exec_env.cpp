#include "sandbox/exec_env.hpp"

#include <cctype>

extern char** environ;

namespace llmx::sandbox {
namespace {

constexpr std::string_view kCoreVars[] = {"HOME",     "LOGNAME", "PATH", "SHELL", "USER",
                                          "USERNAME", "TMPDIR",  "TEMP", "TMP"};
// The reference's three, plus passwords and credentials (llmx: DATABASE_PASSWORD, MY_PASSWD,
// GOOGLE_APPLICATION_CREDENTIALS ...).
constexpr std::string_view kDefaultExcludes[] = {"*KEY*",      "*SECRET*",     "*TOKEN*",
                                                 "*PASSWORD*", "*PASSWD*",     "*PASSPHRASE*",
                                                 "*CREDENTIAL*"};

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

bool has_url_credentials(std::string_view value) {
  for (size_t at = value.find("://"); at != std::string_view::npos; at = value.find("://", at + 3)) {
    std::string_view rest = value.substr(at + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?# \t"));
    const size_t userinfo_end = authority.rfind('@');
    if (userinfo_end != std::string_view::npos &&
        authority.substr(0, userinfo_end).find(':') != std::string_view::npos)
      return true;
  }
  return false;
}

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
    const bool drop = (!policy.ignore_default_excludes &&
                       (matches_any(kDefaultExcludes, it->first) || has_url_credentials(it->second))) ||
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

EnvMap current_process_env() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

}  // namespace llmx::sandbox
