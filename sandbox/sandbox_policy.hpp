// From a SandboxPolicy to the restrictions a child applies to itself (engine.md §6.3-6.4,
// DECISIONS E11). Layers, outermost first: namespaces (own PID/mount/IPC/UTS, and network
// without network access; a user namespace for an unprivileged server) with a read-only view of
// the file system except the writable roots; every capability dropped; Landlock; seccomp.
// Everything that allocates happens in prepare(); the child-side steps are plain syscalls so the
// child can run them between clone(CLONE_VM | CLONE_VFORK) and exec in a multithreaded server.
#pragma once

#include <linux/filter.h>

#include <memory>
#include <string>
#include <vector>

#include "protocol/core/policy.hpp"
#include "sandbox/cgroup.hpp"
#include "sandbox/namespaces.hpp"
#include "sandbox/process_fd.hpp"

namespace llmx::sandbox {

// `sandbox_fallback` (E11): what to do when the namespace layer is refused by the kernel.
enum class SandboxFallback { refuse, unsandboxed_with_approval };

enum class Isolation {
  automatic,       // the best mode probe() found
  namespaces,      // namespaces as the server may create them (privileged, else user)
  user_namespace,  // always through a user namespace (what an unprivileged server gets)
  landlock_only,   // no namespaces: Landlock, seccomp, capabilities (the fallback)
};

struct SandboxOptions {
  bool allow_git_writes = false;  // sandbox_workspace_write.allow_git_writes
  SandboxFallback fallback = SandboxFallback::refuse;
  Isolation isolation = Isolation::automatic;
  // $LLMX_HOME: its auth.json and .env read as empty inside, and the whole folder is read-only
  // even under a writable root (config.toml must not be rewritten from inside the sandbox).
  std::string llmx_home;
};

// What this machine can enforce; for `llmx sandbox --check` and session_configured.
struct Support {
  ns::Support namespaces;
  int landlock_abi = 0;  // 0 = unavailable
  bool seccomp = false;
  bool init = false;  // llmx-sandbox-init can run as PID 1 (else the command itself is PID 1)
  cgroup::Support cgroup;  // holds a command's processes where namespaces are unavailable
  std::string summary;  // one line per layer
  // The namespace layer is what makes a sandbox whole; without it the fallback applies.
  bool complete() const { return namespaces.mode != ns::Mode::none; }
};
// Cached per effective uid; the first call forks short-lived children to test namespaces.
const Support& probe();

// The files of $LLMX_HOME a command must not read: the stored API key and the .env file.
std::vector<std::string> secret_files(const std::string& llmx_home);

// Writable roots of a policy, in the reference order: writable_roots, cwd, /tmp, $TMPDIR.
// Empty for read-only; for danger-full-access the caller applies no sandbox at all.
std::vector<std::string> writable_roots(const SandboxPolicy& policy, const std::string& cwd);


class PreparedSandbox {
 public:
  // Prepares the restrictions for `policy`. Returns false with *error when the namespace layer
  // is unavailable and options.fallback is refuse; with unsandboxed_with_approval it applies what
  // is available and enforced() is false.
  bool prepare(const SandboxPolicy& policy, const std::string& cwd, const SandboxOptions& options,
               std::string* error);

  bool active() const { return active_; }      // anything to apply at all
  bool enforced() const { return enforced_; }  // every layer the policy asks for is applied
  int clone_flags() const { return clone_flags_; }  // namespaces the child is created in
  bool use_init() const { return use_init_; }
  // The command's own cgroup (only without namespaces); the process loop keeps it until the
  // command and everything it started are gone.
  std::unique_ptr<cgroup::Group> take_cgroup() { return std::move(cgroup_); }

  // Child side, async-signal-safe. Step 1 (before chdir): user namespace maps and mounts.
  // Step 2 (after chdir): capabilities, no_new_privs, Landlock, seccomp. Each returns 0 or an
  // errno value and names the failed step in *step.
  int enter_namespaces(const char** step) const noexcept;
  int restrict_self(const char** step) const noexcept;

 private:
  bool active_ = false;
  bool enforced_ = true;
  bool use_init_ = false;
  bool fresh_proc_ = false;
  int clone_flags_ = 0;
  int last_cap_ = 0;
  ns::Mode mode_ = ns::Mode::none;
  ns::MountPlan mounts_;
  mutable std::vector<int> scratch_;  // the child's detached mount copies
  std::string uid_map_, gid_map_;
  UniqueFd ruleset_;
  const sock_fprog* seccomp_ = nullptr;
  std::unique_ptr<cgroup::Group> cgroup_;
};

}  // namespace llmx::sandbox
