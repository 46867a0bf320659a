// Where the kernel refuses namespaces, a cgroup v2 of its own per command keeps track of every
// process the command starts (a `setsid` daemon included) so that all of them can be killed when
// the command ends, times out or is interrupted. Needs a cgroup2 hierarchy the server may write
// (root on most hosts, a delegated subtree under systemd); otherwise the process group is all
// there is, and `llmx sandbox --check` says so.
#pragma once

#include <cstdint>
#include <string>

namespace llmx::sandbox::cgroup {

struct Support {
  std::string parent;  // the server's own cgroup directory, writable; empty = unavailable
  std::string detail;  // why not, for `llmx sandbox --check`
};
Support detect();  // cached

class Group {
 public:
  Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group();  // kills what is left and removes the directory

  // mkdir <parent>/llmx-<pid>-<n>. False with *error when it cannot.
  bool create(const std::string& parent, std::string* error);
  // What a child writes "0" to, to move itself in (before exec).
  const char* procs_path() const { return procs_.c_str(); }
  void kill();                // every member, at once (cgroup.kill, else SIGKILL one by one)
  bool populated() const;     // any member left

 private:
  std::string dir_, procs_;
};

// Child side, async-signal-safe: moves the calling process into the group. 0 or an errno value.
int join(const char* procs_path) noexcept;

}  // namespace llmx::sandbox::cgroup
