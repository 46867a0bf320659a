#include "sandbox/seccomp_filter.hpp"

#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "sandbox/process_fd.hpp"

namespace llmx::sandbox::seccomp {
namespace {

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the seccomp network filter supports x86_64 and aarch64 only"
#endif

// Denied outright. recvfrom stays allowed (the reference allows it: it is useless without a
// socket but harmless on pipes); io_uring_setup is denied because io_uring submits network
// operations that no syscall filter sees.
constexpr const char* kDenied[] = {
    "connect",     "accept",     "accept4",    "bind",    "listen",         "getpeername",
    "getsockname", "shutdown",   "sendto",     "sendmsg", "sendmmsg",       "recvmsg",
    "recvmmsg",    "getsockopt", "setsockopt", "ptrace",  "io_uring_setup",
};

struct Cache {
  std::once_flag once;
  std::vector<sock_filter> code;
  sock_fprog prog{};
  std::string error;
};

Cache& cache() {
  static Cache c;
  return c;
}

std::string build(std::vector<sock_filter>& out) {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "seccomp_init failed";
  struct Guard {
    scmp_filter_ctx c;
    ~Guard() { ::seccomp_release(c); }
  } guard{ctx};
  // The child sets no_new_privs itself, before Landlock; libseccomp must not do it again.
  ::seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  for (const char* name : kDenied) {
    int nr = ::seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return std::string("unknown syscall ") + name;
    if (int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0); rc < 0)
      return std::string("seccomp_rule_add(") + name + "): " + std::strerror(-rc);
  }
  for (int nr : {int(SCMP_SYS(socket)), int(SCMP_SYS(socketpair))}) {
    if (int rc =
            ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
        rc < 0)
      return std::string("seccomp_rule_add(socket): ") + std::strerror(-rc);
  }
  // libseccomp 2.5 exports only to a file descriptor.
  UniqueFd mem(::memfd_create("llmx-seccomp", MFD_CLOEXEC));
  if (!mem) return std::string("memfd_create: ") + std::strerror(errno);
  if (int rc = ::seccomp_export_bpf(ctx, mem.get()); rc < 0)
    return std::string("seccomp_export_bpf: ") + std::strerror(-rc);
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % off_t(sizeof(sock_filter)) != 0) return "seccomp_export_bpf: bad size";
  out.resize(size_t(size) / sizeof(sock_filter));
  if (::pread(mem.get(), out.data(), size_t(size), 0) != size)
    return "seccomp_export_bpf: short read";
  return {};
}

}  // namespace

bool available() {
  static const bool ok = [] {
    uint32_t action = SECCOMP_RET_ERRNO;
    return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
  }();
  return ok;
}

const sock_fprog* network_filter(std::string* error) {
  Cache& c = cache();
  std::call_once(c.once, [&c] {
    c.error = build(c.code);
    if (c.error.empty()) {
      c.prog.len = static_cast<unsigned short>(c.code.size());
      c.prog.filter = c.code.data();
    }
  });
  if (!c.error.empty()) {
    if (error) *error = c.error;
    return nullptr;
  }
  return &c.prog;
}

int install(const sock_fprog* prog) noexcept {
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == 0) return 0;
  return errno;
}

}  // namespace llmx::sandbox::seccomp
