#include "sandbox/sandbox_policy.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "sandbox/landlock.hpp"
#include "sandbox/process.hpp"
#include "sandbox/seccomp_filter.hpp"

namespace llmx::sandbox {
namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// Async-signal-safe write of a whole small file (uid_map and friends).
int write_file(const char* path, const std::string& text) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = n == ssize_t(text.size()) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return err;
}

// Runs `fn` in a forked child and reports whether it exited 0. Only used by probe(); the child
// calls nothing but syscalls, so forking a multithreaded process is safe here.
template <class F>
bool try_in_child(F fn) {
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) ::_exit(fn() ? 0 : 1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

GitProtection detect_git_protection() {
  if (try_in_child([] {
        return ::unshare(CLONE_NEWNS) == 0 &&
               ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
      }))
    return GitProtection::mount_namespace;
  const std::string uid_map =
      std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
  const std::string gid_map =
      std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
  if (try_in_child([&] {
        return ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 &&
               write_file("/proc/self/setgroups", "deny") == 0 &&
               write_file("/proc/self/uid_map", uid_map) == 0 &&
               write_file("/proc/self/gid_map", gid_map) == 0 &&
               ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
      }))
    return GitProtection::user_namespace;
  return GitProtection::children_only;
}

Support compute_support() {
  Support s;
  s.landlock_abi = landlock::abi_version();
  std::string seccomp_error;
  s.seccomp = seccomp::available() && seccomp::network_filter(&seccomp_error) != nullptr;
  s.git_protection = detect_git_protection();
  if (s.landlock_abi > 0) {
    s.summary = "landlock: ABI " + std::to_string(s.landlock_abi) + " (filesystem";
    if (s.landlock_abi >= 4) s.summary += ", TCP";
    if (s.landlock_abi >= 6) s.summary += ", signal and abstract-socket scopes";
    s.summary += ")";
    if (s.landlock_abi < 3)
      s.summary += "; truncate(2) outside writable roots is not restricted below ABI 3";
  } else {
    s.summary = "landlock: unavailable (the kernel lacks Landlock or it is disabled)";
  }
  s.summary += "\nseccomp: ";
  s.summary += s.seccomp
                   ? "available (network filter)"
                   : "unavailable" + (seccomp_error.empty() ? "" : " (" + seccomp_error + ")");
  s.summary += "\n.git protection: ";
  s.summary += to_string(s.git_protection);
  return s;
}

unsigned long remount_flags(const std::string& path) {
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return flags;
  // In a user namespace the kernel refuses to clear flags locked by the outer mount.
  if (vfs.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (vfs.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (vfs.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (vfs.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (vfs.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (vfs.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

bool contains_icase(const std::string& haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower((unsigned char)a) == b; });
  return it != haystack.end();
}

}  // namespace

std::string_view to_string(GitProtection p) {
  switch (p) {
    case GitProtection::automatic:
      return "automatic";
    case GitProtection::mount_namespace:
      return "read-only bind mount (private mount namespace)";
    case GitProtection::user_namespace:
      return "read-only bind mount (user + mount namespace)";
    case GitProtection::children_only:
      return "landlock only (root entries cannot be created or removed in git workspaces)";
  }
  return "?";
}

Support probe() {
  static const Support s = compute_support();
  return s;
}

std::vector<std::string> writable_roots(const SandboxPolicy& policy, const std::string& cwd) {
  std::vector<std::string> roots;
  if (policy.mode != SandboxMode::workspace_write) return roots;
  auto add = [&roots](const std::string& p) {
    if (!p.empty() && std::find(roots.begin(), roots.end(), p) == roots.end()) roots.push_back(p);
  };
  for (const auto& r : policy.writable_roots) add(r);
  add(cwd);
  if (!policy.exclude_slash_tmp && is_dir("/tmp")) add("/tmp");
  if (!policy.exclude_tmpdir_env_var) {
    if (const char* t = std::getenv("TMPDIR"); t && *t) add(t);
  }
  return roots;
}

bool PreparedSandbox::prepare(const SandboxPolicy& policy, const std::string& cwd,
                              const SandboxOptions& options, std::string* error) {
  if (policy.mode == SandboxMode::danger_full_access) return true;  // nothing to restrict
  const Support support = probe();
  const bool need_seccomp = !policy.has_network();
  std::string missing;
  if (support.landlock_abi <= 0) missing = "Landlock";
  if (need_seccomp && !support.seccomp) missing += missing.empty() ? "seccomp" : " and seccomp";
  if (!missing.empty()) {
    if (options.fallback == SandboxFallback::refuse) {
      if (error)
        *error = "sandbox unavailable: " + missing +
                 " is not available on this system; refusing to run the command "
                 "(sandbox_fallback = \"refuse\")";
      return false;
    }
    enforced_ = false;  // run with whatever is available; the caller obtained approval
  }

  GitProtection git = options.git_protection == GitProtection::automatic ? support.git_protection
                                                                         : options.git_protection;
  landlock::RulesetSpec spec;
  spec.restrict_network = need_seccomp;
  for (const auto& root : writable_roots(policy, cwd)) {
    const std::string dot_git = root + "/.git";
    const bool protect = !options.allow_git_writes && exists(dot_git);
    if (protect && git == GitProtection::children_only) {
      spec.writable_roots.push_back({root, true});
      continue;
    }
    spec.writable_roots.push_back({root, false});
    if (protect && std::find(ro_paths_.begin(), ro_paths_.end(), dot_git) == ro_paths_.end()) {
      ro_paths_.push_back(dot_git);
      ro_flags_.push_back(remount_flags(dot_git));
    }
  }
  if (!ro_paths_.empty()) {
    ns_ = git == GitProtection::user_namespace ? Ns::user : Ns::mount;
    if (ns_ == Ns::user) {
      uid_map_ = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
      gid_map_ = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
    }
  }
  if (support.landlock_abi > 0) {
    std::string why;
    ruleset_ = landlock::build_ruleset(spec, support.landlock_abi, &why);
    if (!ruleset_) {
      if (error) *error = "sandbox setup failed: " + why;
      return false;
    }
  }
  if (need_seccomp && support.seccomp) seccomp_ = seccomp::network_filter();
  active_ = true;
  return true;
}

int PreparedSandbox::enter_namespaces(const char** step) const noexcept {
  if (ns_ == Ns::none) return 0;
  int err = 0;
  if (ns_ == Ns::user) {
    *step = "unshare(user, mount namespace)";
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
    *step = "write uid/gid map";
    if ((err = write_file("/proc/self/setgroups", "deny")) != 0) return err;
    if ((err = write_file("/proc/self/uid_map", uid_map_)) != 0) return err;
    if ((err = write_file("/proc/self/gid_map", gid_map_)) != 0) return err;
  } else {
    *step = "unshare(mount namespace)";
    if (::unshare(CLONE_NEWNS) != 0) return errno;
  }
  // Private first, or the bind mounts would propagate back into the server's namespace.
  *step = "make mounts private";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  *step = "bind .git read-only";
  for (size_t i = 0; i < ro_paths_.size(); ++i) {
    const char* p = ro_paths_[i].c_str();
    if (::mount(p, p, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
    if (::mount(nullptr, p, nullptr, ro_flags_[i], nullptr) != 0) return errno;
  }
  return 0;
}

int PreparedSandbox::restrict_self(const char** step) const noexcept {
  *step = "no_new_privs";
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (ruleset_) {
    *step = "landlock_restrict_self";
    if (int err = landlock::restrict_self(ruleset_.get()); err != 0) return err;
  }
  if (seccomp_) {
    *step = "seccomp filter";
    if (int err = seccomp::install(seccomp_); err != 0) return err;
  }
  return 0;
}

// engine.md §6.6. Timeouts are reported as timeouts, never as denials.
bool is_sandbox_denial(const ExecResult& r, bool sandboxed) {
  if (!sandboxed || r.exit_code == 0 || r.timed_out) return false;
  static constexpr std::string_view kKeywords[] = {"operation not permitted",
                                                   "permission denied",
                                                   "read-only file system",
                                                   "seccomp",
                                                   "sandbox",
                                                   "landlock",
                                                   "failed to write file"};
  for (const std::string* text : {&r.stdout_text, &r.stderr_text, &r.aggregated, &r.spawn_error})
    for (auto k : kKeywords)
      if (contains_icase(*text, k)) return true;
  if (r.exit_code == 2 || r.exit_code == 126 || r.exit_code == 127) return false;
  return r.exit_code == 128 + SIGSYS;
}

}  // namespace llmx::sandbox
