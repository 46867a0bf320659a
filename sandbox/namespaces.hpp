// The namespace layer of the sandbox: a command runs in its own PID, mount, IPC and UTS
// namespaces (plus a network namespace without network access, and a user namespace when the
// server lacks CAP_SYS_ADMIN), sees a fresh /proc, and a file system that is read-only except
// its writable roots, whose `.git` entries are read-only again and where $LLMX_HOME's secrets
// read as empty. Plans are computed in the server; the child applies them with plain syscalls,
// so it can run between clone(CLONE_VM | CLONE_VFORK) and exec.
#pragma once

#include <string>
#include <vector>

namespace llmx::sandbox::ns {

enum class Mode {
  none,        // namespaces unavailable: Landlock (+ cgroup) only
  privileged,  // the server has CAP_SYS_ADMIN (root, as in most containers)
  user,        // an unprivileged server: a user namespace mapping its own uid and gid
};
std::string_view to_string(Mode m);

// What the kernel allows, found by trying it in short-lived children (probe() caches it).
struct Support {
  Mode mode = Mode::none;
  bool fresh_proc = false;  // a new procfs mounts in the PID namespace
  std::string detail;       // why a mode was refused, for `llmx sandbox --check`
};
Support detect();

// The mount view of one command. Paths are canonical and exist.
struct MountPlan {
  bool readonly_root = true;            // false when "/" itself is a writable root
  std::vector<std::string> writable;    // bound read-write (nodev, nosuid), parents first
  std::vector<std::string> read_only;   // `.git` directories and files inside writable roots
  std::vector<std::string> hidden;      // secret files: /dev/null is bound over them
};

// A one-line id map of `id` onto itself ("id id 1\n"), for uid_map and gid_map.
std::string id_map(unsigned id);

// clone() flags that create the namespaces of `mode`.
int clone_flags(Mode mode, bool isolate_network);

// Child side, async-signal-safe. Each returns 0 or an errno value and names the step in *step.
// `uid_map`/`gid_map` are "inside outside 1\n" lines (user mode only).
int enter_user_namespace(const std::string& uid_map, const std::string& gid_map,
                         const char** step) noexcept;
// `scratch` holds plan.writable.size() ints for the detached copies of the writable roots.
int build_mounts(const MountPlan& plan, int* scratch, bool fresh_proc, const char** step) noexcept;

}  // namespace llmx::sandbox::ns
