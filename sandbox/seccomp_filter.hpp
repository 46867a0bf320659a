// The seccomp network filter of the Linux sandbox (engine.md §6.4). Built once with libseccomp in
// the parent and cached as raw BPF, so the child only needs prctl(PR_SET_SECCOMP), which is safe
// after fork/vfork.
#pragma once

#include <linux/filter.h>

#include <string>

namespace llmx::sandbox::seccomp {

// Whether the kernel supports seccomp filters returning errno values. Cached.
bool available();

// The network-denial program for the native architecture (x86_64 or aarch64): EPERM for the
// socket syscalls listed in §6.4, ptrace and io_uring_setup; socket/socketpair only for domains
// other than AF_UNIX. Syscalls of any other ABI (i386, x32) kill the process, since the rules
// would not match them. Returns nullptr (and sets *error) if it cannot be built.
const sock_fprog* network_filter(std::string* error = nullptr);

// Async-signal-safe: installs `prog` on the calling thread. no_new_privs must already be set.
// Returns 0 or an errno value.
int install(const sock_fprog* prog) noexcept;

}  // namespace llmx::sandbox::seccomp
