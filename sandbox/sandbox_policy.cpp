#include "sandbox/sandbox_policy.hpp"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "sandbox/capabilities.hpp"
#include "sandbox/git_dirs.hpp"
#include "sandbox/init_image.hpp"
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

std::string canonical(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

Support compute_support() {
  Support s;
  s.namespaces = ns::detect();
  s.landlock_abi = landlock::abi_version();
  std::string seccomp_error, init_error;
  s.seccomp = seccomp::available() && seccomp::network_filter(&seccomp_error) != nullptr;
  s.init = init_image_fd(&init_error) >= 0;
  s.cgroup = cgroup::detect();

  s.summary = "namespaces: ";
  if (s.namespaces.mode == ns::Mode::none) {
    s.summary += "unavailable (" + s.namespaces.detail + ")";
  } else {
    s.summary += std::string(ns::to_string(s.namespaces.mode));
    s.summary += s.namespaces.mode == ns::Mode::user ? " (unprivileged server)" : " (privileged server)";
    s.summary += s.namespaces.fresh_proc ? "; fresh /proc" : "; " + s.namespaces.detail;
    s.summary += "; / read-only, writable roots nodev, .git read-only, $LLMX_HOME secrets hidden";
  }
  s.summary += "\npid 1: ";
  s.summary += s.init ? "llmx-sandbox-init (from a sealed memfd)"
                      : "the command itself (llmx-sandbox-init cannot run: " + init_error + ")";
  s.summary += "\ncapabilities: all dropped (bounding set emptied, no_new_privs)";
  if (s.landlock_abi > 0) {
    s.summary += "\nlandlock: ABI " + std::to_string(s.landlock_abi) + " (filesystem";
    if (s.landlock_abi >= 4) s.summary += ", TCP";
    if (s.landlock_abi >= 6) s.summary += ", signal and abstract-socket scopes";
    s.summary += ")";
  } else {
    s.summary += "\nlandlock: unavailable (the kernel lacks Landlock or it is disabled)";
  }
  s.summary += "\nseccomp: ";
  s.summary += s.seccomp
                   ? "available (network filter)"
                   : "unavailable" + (seccomp_error.empty() ? "" : " (" + seccomp_error + ")");
  s.summary += "\ncgroup: ";
  s.summary += !s.cgroup.parent.empty()
                   ? "one per command below " + s.cgroup.parent + " (used without namespaces)"
                   : "unavailable (" + s.cgroup.detail + "): without namespaces only the process group is killed";
  return s;
}

// Roots that exist, canonical (mount targets must be real paths), without duplicates, parents
// before their children so nested writable mounts stack in the right order.
std::vector<std::string> canonical_roots(const std::vector<std::string>& roots) {
  std::vector<std::string> out;
  for (const auto& r : roots) {
    std::string c = canonical(r);
    if (!c.empty() && is_dir(c) && std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  return out;
}

}  // namespace

const Support& probe() {
  // Per effective uid: what a process may create changes when it drops privileges after a probe.
  static std::mutex mu;
  static std::map<uid_t, Support> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(::geteuid());
  if (it == cache.end()) it = cache.emplace(::geteuid(), compute_support()).first;
  return it->second;
}

std::vector<std::string> secret_files(const std::string& llmx_home) {
  if (llmx_home.empty()) return {};
  return {llmx_home + "/auth.json", llmx_home + "/.env"};
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
  const Support& support = probe();
  const bool restrict_network = !policy.has_network();

  switch (options.isolation) {
    case Isolation::automatic:
    case Isolation::namespaces:
      mode_ = support.namespaces.mode;
      break;
    case Isolation::user_namespace:
      mode_ = support.namespaces.mode == ns::Mode::none ? ns::Mode::none : ns::Mode::user;
      break;
    case Isolation::landlock_only:
      mode_ = ns::Mode::none;
      break;
  }
  // Without namespaces the file system rests on Landlock alone and nothing holds the command's
  // descendants: only an explicit choice (tests, `landlock_only`) counts that as enforced.
  std::string missing;
  if (mode_ == ns::Mode::none && options.isolation != Isolation::landlock_only)
    missing = "namespaces (" + support.namespaces.detail + ")";
  if (mode_ == ns::Mode::none && support.landlock_abi <= 0)
    missing += missing.empty() ? "Landlock" : " and Landlock";
  if (restrict_network && mode_ == ns::Mode::none && !support.seccomp)
    missing += missing.empty() ? "seccomp" : " and seccomp";
  if (!missing.empty()) {
    if (options.fallback == SandboxFallback::refuse) {
      if (error)
        *error = "sandbox unavailable: " + missing +
                 " not available on this system; refusing to run the command "
                 "(sandbox_fallback = \"refuse\")";
      return false;
    }
    enforced_ = false;  // run with whatever is available; the caller obtained approval
  }

  const std::vector<std::string> roots = canonical_roots(writable_roots(policy, cwd));
  landlock::RulesetSpec spec;
  spec.restrict_network = restrict_network;
  if (mode_ != ns::Mode::none) {
    for (const auto& root : roots) {
      if (root == "/") {
        mounts_.readonly_root = false;  // everything is writable: no read-only view to punch
        continue;
      }
      mounts_.writable.push_back(root);
      spec.writable_roots.push_back({root, false});
    }
    if (!mounts_.readonly_root) mounts_.writable.clear();
    if (!options.allow_git_writes)
      for (const auto& root : roots)
        for (auto& git : find_git_entries(root))
          if (std::find(mounts_.read_only.begin(), mounts_.read_only.end(), git) ==
              mounts_.read_only.end())
            mounts_.read_only.push_back(std::move(git));
    if (const std::string home = canonical(options.llmx_home); !home.empty())
      for (const auto& root : mounts_.writable)
        if (home == root || home.starts_with(root + "/")) {
          mounts_.read_only.push_back(home);
          break;
        }
    for (const auto& f : secret_files(options.llmx_home)) {
      struct stat st {};
      std::string c = canonical(f);
      if (!c.empty() && ::stat(c.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) &&
          std::find(mounts_.hidden.begin(), mounts_.hidden.end(), c) == mounts_.hidden.end())
        mounts_.hidden.push_back(std::move(c));
    }
    scratch_.assign(mounts_.writable.size(), -1);
    if (mode_ == ns::Mode::user) {
      uid_map_ = ns::id_map(::geteuid());
      gid_map_ = ns::id_map(::getegid());
    }
    clone_flags_ = ns::clone_flags(mode_, restrict_network);
    fresh_proc_ = support.namespaces.fresh_proc || options.isolation == Isolation::user_namespace;
    use_init_ = support.init;
  } else {
    // Landlock cannot subtract `.git` from a root: the root stays read-only and each entry but
    // `.git` is granted instead.
    for (const auto& root : roots) {
      const bool protect = !options.allow_git_writes && exists(root + "/.git");
      spec.writable_roots.push_back({root, protect});
    }
    // Nothing else holds the command's descendants together: a cgroup of its own does.
    if (!support.cgroup.parent.empty()) {
      auto group = std::make_unique<cgroup::Group>();
      if (group->create(support.cgroup.parent, nullptr)) cgroup_ = std::move(group);
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
  if (restrict_network && support.seccomp) seccomp_ = seccomp::network_filter();
  last_cap_ = caps::last_cap();
  active_ = true;
  return true;
}

int PreparedSandbox::enter_namespaces(const char** step) const noexcept {
  if (cgroup_) {
    *step = "join the command's cgroup";
    if (int e = cgroup::join(cgroup_->procs_path())) return e;
  }
  if (mode_ == ns::Mode::none) return 0;
  if (mode_ == ns::Mode::user)
    if (int e = ns::enter_user_namespace(uid_map_, gid_map_, step)) return e;
  return ns::build_mounts(mounts_, scratch_.data(), fresh_proc_, step);
}

int PreparedSandbox::restrict_self(const char** step) const noexcept {
  *step = "drop capabilities";
  if (int err = caps::drop_all(last_cap_); err != 0) return err;
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
bool is_sandbox_denial(const DenialFacts& r, bool sandboxed) {
  if (!sandboxed || r.exit_code == 0 || r.timed_out) return false;
  static constexpr std::string_view kKeywords[] = {"operation not permitted",
                                                   "permission denied",
                                                   "read-only file system",
                                                   "seccomp",
                                                   "sandbox",
                                                   "landlock",
                                                   "failed to write file"};
  auto contains_icase = [](std::string_view haystack, std::string_view needle) {
    auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                          [](char a, char b) { return std::tolower((unsigned char)a) == b; });
    return it != haystack.end();
  };
  for (std::string_view text : {r.stdout_text, r.stderr_text, r.aggregated, r.spawn_error})
    for (auto k : kKeywords)
      if (contains_icase(text, k)) return true;
  if (r.exit_code == 2 || r.exit_code == 126 || r.exit_code == 127) return false;
  return r.exit_code == 128 + SIGSYS;
}

}  // namespace llmx::sandbox
