// Dropping every capability before a sandboxed command runs: the bounding set is emptied, the
// inheritable and ambient sets cleared and root's special treatment at execve() switched off and
// locked, so not even a uid-0 command regains a capability (no sethostname, mknod, chown to
// another uid, mount, CAP_DAC_OVERRIDE ...).
#pragma once

namespace llmx::sandbox::caps {

// Highest capability number this kernel knows (/proc/sys/kernel/cap_last_cap). Call it in the
// server: the child must not read files.
int last_cap();

// Child side, async-signal-safe; returns 0 or an errno value. Needs CAP_SETPCAP when the process
// has capabilities at all; a process without any (an unprivileged server with no namespaces) only
// clears what it can.
int drop_all(int last_cap) noexcept;

}  // namespace llmx::sandbox::caps
