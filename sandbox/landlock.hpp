// Landlock rulesets (engine.md §6.4, DECISIONS E11). The ruleset is built in the parent; the child
// only calls restrict_self(), which is a bare syscall and safe after fork/vfork.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/process_fd.hpp"

namespace llmx::sandbox::landlock {

// Highest ABI the kernel offers (0 = Landlock unavailable or disabled). Cached after the first
// call.
int abi_version();

struct WritableRoot {
  std::string path;
  // Landlock cannot subtract a sub-path, so to keep `<root>/.git` read-only without a mount
  // namespace, the root itself is only readable and every existing entry except `.git` is
  // writable. New top-level entries cannot be created in that mode (see process README notes).
  bool exclude_git_by_children = false;
};

struct RulesetSpec {
  std::vector<WritableRoot> writable_roots;  // full access beneath each
  bool restrict_network = false;  // ABI >= 4: no TCP bind/connect; ABI >= 6: abstract unix scope
  bool scope_signals = true;      // ABI >= 6: no signals to processes outside the sandbox
};

// Rights handled for an ABI (all filesystem rights the kernel knows of).
uint64_t handled_fs_rights(int abi);

// Builds the ruleset for `abi` (pass abi_version()). Returns an invalid fd and sets *error on
// failure. Roots that do not exist are skipped (the reference does the same).
UniqueFd build_ruleset(const RulesetSpec& spec, int abi, std::string* error);

// Async-signal-safe: landlock_restrict_self(). Returns 0 or an errno value. Requires no_new_privs
// (or CAP_SYS_ADMIN) to be set beforehand.
int restrict_self(int ruleset_fd) noexcept;

}  // namespace llmx::sandbox::landlock
