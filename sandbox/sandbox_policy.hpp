// From a SandboxPolicy to the restrictions a child applies to itself (engine.md §6.3-6.4,
// DECISIONS E11). Everything that allocates happens in prepare(); the two apply steps are plain
// syscalls so the child can run them between vfork and exec in a multithreaded server.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "protocol/policy.hpp"
#include "sandbox/process_fd.hpp"

namespace llmx::sandbox {

// `sandbox_fallback` (E11): what to do when Landlock or seccomp is missing.
enum class SandboxFallback { refuse, unsandboxed_with_approval };

// How `<root>/.git` is kept read-only inside writable roots.
enum class GitProtection {
  automatic,        // the best mode probe() found
  mount_namespace,  // read-only bind mount in a private mount namespace (needs CAP_SYS_ADMIN)
  user_namespace,   // the same inside a new user namespace (unprivileged)
  children_only,    // Landlock only: root read-only, each existing entry but .git writable
};

struct SandboxOptions {
  bool allow_git_writes = false;  // sandbox_workspace_write.allow_git_writes
  SandboxFallback fallback = SandboxFallback::refuse;
  GitProtection git_protection = GitProtection::automatic;
};

// What this machine can enforce; for `llmx sandbox --check` and session_configured.
struct Support {
  int landlock_abi = 0;  // 0 = unavailable
  bool seccomp = false;
  GitProtection git_protection = GitProtection::children_only;  // resolved, never automatic
  std::string summary;                                          // one line per mechanism
  bool complete() const { return landlock_abi > 0 && seccomp; }
};
Support probe();  // cached; the first call forks a short-lived child to test namespaces

// Writable roots of a policy, in the reference order: writable_roots, cwd, /tmp, $TMPDIR.
// Empty for read-only; for danger-full-access the caller applies no sandbox at all.
std::vector<std::string> writable_roots(const SandboxPolicy& policy, const std::string& cwd);

std::string_view to_string(GitProtection p);

class PreparedSandbox {
 public:
  // Prepares the restrictions for `policy`. Returns false with *error when something required is
  // unavailable and options.fallback is refuse; with unsandboxed_with_approval it applies what
  // is available and enforced() is false.
  bool prepare(const SandboxPolicy& policy, const std::string& cwd, const SandboxOptions& options,
               std::string* error);

  bool active() const { return active_; }      // anything to apply at all
  bool enforced() const { return enforced_; }  // everything the policy asks for will be applied

  // Child side, async-signal-safe. Step 1 (before chdir): namespaces and the .git bind mounts.
  // Step 2 (after chdir): no_new_privs, Landlock, seccomp. Each returns 0 or an errno value and
  // names the failed step in *step.
  int enter_namespaces(const char** step) const noexcept;
  int restrict_self(const char** step) const noexcept;

 private:
  enum class Ns { none, mount, user };
  bool active_ = false;
  bool enforced_ = true;
  UniqueFd ruleset_;
  const sock_fprog* seccomp_ = nullptr;
  Ns ns_ = Ns::none;
  std::vector<std::string> ro_paths_;    // `.git` entries to bind read-only
  std::vector<unsigned long> ro_flags_;  // remount flags, keeping the mount's locked flags
  std::string uid_map_, gid_map_;
};

}  // namespace llmx::sandbox
