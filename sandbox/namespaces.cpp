#include "sandbox/namespaces.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace llmx::sandbox::ns {
namespace {

// Async-signal-safe write of a whole small file (uid_map and friends).
int write_file(const char* path, const char* text, size_t size) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = ::write(fd, text, size);
  int err = n == ssize_t(size) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return err;
}

int set_attr(const char* path, unsigned int flags, uint64_t set, uint64_t clear) noexcept {
  mount_attr attr{};
  attr.attr_set = set;
  attr.attr_clr = clear;
  return ::mount_setattr(AT_FDCWD, path, flags, &attr, sizeof attr) == 0 ? 0 : errno;
}

// Probe child: enter the namespaces of `mode`, then, as PID 1 of the new PID namespace, make the
// mounts private and mount a fresh /proc. Exit 0: all worked; 1: all but /proc; 10 + errno: no.
int probe_mode(Mode mode) {
  const std::string uid_map = id_map(::geteuid()), gid_map = id_map(::getegid());
  pid_t pid = ::fork();
  if (pid < 0) return 10 + errno;
  if (pid == 0) {
    if (::unshare(clone_flags(mode, true)) != 0) ::_exit(10 + errno);
    const char* step = nullptr;
    // A non-dumpable server's /proc/self files belong to root; this child is a copy of it.
    if (mode == Mode::user && ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) ::_exit(10 + errno);
    if (mode == Mode::user)
      if (int e = enter_user_namespace(uid_map, gid_map, &step)) ::_exit(10 + e);
    pid_t init = ::fork();  // the first child of the new PID namespace
    if (init < 0) ::_exit(10 + errno);
    if (init == 0) {
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(10 + errno);
      if (set_attr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0) != 0) ::_exit(10 + errno);
      ::_exit(::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0
                                                                                                : 1);
    }
    int status = 0;
    while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
    }
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 10 + EIO);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 10 + EIO;
}

}  // namespace

std::string id_map(unsigned id) {
  return std::to_string(id) + " " + std::to_string(id) + " 1\n";
}

std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::none:
      return "unavailable";
    case Mode::privileged:
      return "pid, mount, ipc, uts, net";
    case Mode::user:
      return "user, pid, mount, ipc, uts, net";
  }
  return "?";
}

Support detect() {
  Support s;
  for (Mode mode : {Mode::privileged, Mode::user}) {
    int code = probe_mode(mode);
    if (code == 0 || code == 1) {
      s.mode = mode;
      s.fresh_proc = code == 0;
      if (!s.fresh_proc) s.detail += "a fresh /proc cannot be mounted: /proc is covered by an empty tmpfs";
      return s;
    }
    if (!s.detail.empty()) s.detail += "; ";
    s.detail += std::string(mode == Mode::privileged ? "without" : "with") + " a user namespace: " +
                std::strerror(code >= 10 ? code - 10 : EIO);
  }
  return s;
}

int clone_flags(Mode mode, bool isolate_network) {
  if (mode == Mode::none) return 0;
  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (isolate_network) flags |= CLONE_NEWNET;
  if (mode == Mode::user) flags |= CLONE_NEWUSER;
  return flags;
}

int enter_user_namespace(const std::string& uid_map, const std::string& gid_map,
                         const char** step) noexcept {
  *step = "write uid/gid map";
  if (int e = write_file("/proc/self/setgroups", "deny", 4)) return e;
  if (int e = write_file("/proc/self/uid_map", uid_map.data(), uid_map.size())) return e;
  return write_file("/proc/self/gid_map", gid_map.data(), gid_map.size());
}

int build_mounts(const MountPlan& plan, int* scratch, bool fresh_proc, const char** step) noexcept {
  // Private first, or every mount below would propagate back into the server's namespace.
  *step = "make mounts private";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  // Detached copies of the writable roots keep their own (writable) flags while everything else
  // becomes read-only; then they are attached over their paths, parents first.
  *step = "copy writable roots";
  const size_t n = plan.writable.size();
  for (size_t i = 0; i < n; ++i) {
    scratch[i] = ::open_tree(AT_FDCWD, plan.writable[i].c_str(),
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (scratch[i] < 0) return errno;
  }
  if (plan.readonly_root) {
    *step = "make / read-only";
    if (int e = set_attr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)) return e;
  }
  *step = "mount writable roots";
  for (size_t i = 0; i < n; ++i) {
    const char* path = plan.writable[i].c_str();
    if (::move_mount(scratch[i], "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0) return errno;
    ::close(scratch[i]);
    scratch[i] = -1;
    // Devices made inside a writable root must not open; set-id bits must not count.
    if (int e = set_attr(path, AT_RECURSIVE, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID, 0)) return e;
  }
  // A protected path removed since the plan was made has nothing left to protect (another
  // process may delete a repository under /tmp at any moment): skip it rather than fail.
  *step = "bind .git read-only";
  for (const auto& p : plan.read_only) {
    if (::mount(p.c_str(), p.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      if (errno == ENOENT) continue;
      return errno;
    }
    if (int e = set_attr(p.c_str(), AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)) return e;
  }
  *step = "hide secrets";
  for (const auto& p : plan.hidden) {
    if (::mount("/dev/null", p.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      if (errno == ENOENT) continue;
      return errno;
    }
    if (int e = set_attr(p.c_str(), 0, MOUNT_ATTR_RDONLY, 0)) return e;
  }
  // The PID namespace's own /proc: only the command's processes are visible.
  *step = "mount /proc";
  if (fresh_proc) {
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
      return errno;
  } else if (::mount("tmpfs", "/proc", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                     "size=0,mode=555") != 0) {
    return errno;
  }
  return 0;
}

}  // namespace llmx::sandbox::ns
