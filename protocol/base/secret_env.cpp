#include "protocol/base/secret_env.hpp"

#include <sys/auxv.h>

#include <cerrno>  // program_invocation_name
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocol/base/text.hpp"

extern char** environ;

namespace llmx {
namespace {

std::map<std::string, std::string>& store() {
  static std::map<std::string, std::string> s;
  return s;
}

// The strings the kernel laid out on the stack at exec, where /proc/<pid>/environ reads the
// environment: from argv[0]'s string (argv's strings come first) to the executable's name, which
// the kernel puts right above the environment's (AT_EXECFN). Read from memory: /proc costs a
// file read before `initialize` is answered, and may not be mounted at all.
bool initial_env_block(uintptr_t* begin, uintptr_t* end) {
  const auto first = reinterpret_cast<uintptr_t>(program_invocation_name);
  const auto above = static_cast<uintptr_t>(getauxval(AT_EXECFN));
  if (!first || above <= first) return false;
  *begin = first;
  *end = above;
  return true;
}

}  // namespace

bool has_url_credentials(std::string_view value) {
  for (size_t at = value.find("://"); at != std::string_view::npos; at = value.find("://", at + 3)) {
    std::string_view rest = value.substr(at + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?# \t"));
    const size_t end = authority.rfind('@');
    if (end != std::string_view::npos && authority.substr(0, end).find(':') != std::string_view::npos)
      return true;
  }
  return false;
}

bool is_secret_variable(std::string_view name, std::string_view value) {
  const std::string lower = text::lower(name);
  for (std::string_view word : {"key", "secret", "token", "password", "passwd", "passphrase", "credential"})
    if (lower.find(word) != std::string::npos) return true;
  return has_url_credentials(value);
}

size_t seal_secret_env() {
  struct Found {
    std::string name;
    char* entry;
  };
  std::vector<Found> found;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    if (!is_secret_variable(kv.substr(0, eq), kv.substr(eq + 1))) continue;
    found.push_back({std::string(kv.substr(0, eq)), *e});
    store()[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  if (found.empty()) return 0;
  uintptr_t begin = 0, end = 0;
  const bool block = initial_env_block(&begin, &end);
  for (const auto& f : found) {
    ::unsetenv(f.name.c_str());
    // Wipe the value where /proc/<pid>/environ reads it; strings setenv() made live elsewhere.
    const auto at = reinterpret_cast<uintptr_t>(f.entry);
    if (block && at >= begin && at < end) {
      char* value = std::strchr(f.entry, '=');
      if (value) std::memset(value + 1, 'x', std::strlen(value + 1));
    }
  }
  return found.size();
}

void add_sealed_variable(std::string name, std::string value) { store()[std::move(name)] = std::move(value); }

const char* env_value(const char* name) {
  if (const char* v = std::getenv(name)) return v;
  auto it = store().find(name);
  return it == store().end() ? nullptr : it->second.c_str();
}

uint64_t env_count(const char* name, uint64_t fallback) {
  const char* v = env_value(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  auto n = std::strtoull(v, &end, 10);
  return end && *end == '\0' && n > 0 ? n : fallback;
}

const std::map<std::string, std::string>& sealed_env() {
  return store();
}

}  // namespace llmx
