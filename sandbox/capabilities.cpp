#include "sandbox/capabilities.hpp"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

namespace llmx::sandbox::caps {

int last_cap() {
  static const int last = [] {
    int v = CAP_LAST_CAP;
    if (std::FILE* f = std::fopen("/proc/sys/kernel/cap_last_cap", "re")) {
      if (std::fscanf(f, "%d", &v) != 1) v = CAP_LAST_CAP;
      std::fclose(f);
    }
    return v;
  }();
  return last;
}

int drop_all(int last) noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  const bool has_any = data[0].permitted || data[1].permitted;
  if (has_any) {
    // With CAP_SETPCAP still held: empty the bounding set and make uid 0 ordinary at execve().
    for (int cap = 0; cap <= last; ++cap)
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
    const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                               SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return errno;
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return errno;
  __user_cap_data_struct none[2]{};
  if (::syscall(SYS_capset, &header, none) != 0) return errno;
  return 0;
}

}  // namespace llmx::sandbox::caps
