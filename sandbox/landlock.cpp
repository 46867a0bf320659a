#include "sandbox/landlock.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace llmx::sandbox::landlock {
namespace {

// Debian 12's <linux/landlock.h> stops at ABI 3; the values below are the kernel's UAPI.
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kExecute = 1ull << 0;
constexpr uint64_t kWriteFile = 1ull << 1;
constexpr uint64_t kReadFile = 1ull << 2;
constexpr uint64_t kReadDir = 1ull << 3;
constexpr uint64_t kRefer = 1ull << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ull << 14;  // ABI 3
constexpr uint64_t kIoctlDev = 1ull << 15;  // ABI 5
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr uint64_t kReadRights = kExecute | kReadFile | kReadDir;

constexpr uint64_t kNetBindTcp = 1ull << 0;         // ABI 4
constexpr uint64_t kNetConnectTcp = 1ull << 1;      // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ull << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;        // ABI 6

// The kernel accepts a larger struct as long as fields it does not know are zero.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

int detect_abi() {
  long v = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return v < 0 ? 0 : int(v);
}

bool add_rule(int ruleset, int fd, uint64_t access, std::string* error, const std::string& what) {
  PathBeneathAttr attr{access, fd};
  if (::syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0) == 0) return true;
  if (error) *error = "landlock_add_rule(" + what + "): " + std::strerror(errno);
  return false;
}

// Rule on an already opened O_PATH fd: directories get every handled right, other files only the
// rights that apply to files (the kernel rejects directory rights on a file).
bool add_fd_rule(int ruleset, int fd, uint64_t handled, std::string* error,
                 const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return true;  // vanished: nothing to grant
  uint64_t access = S_ISDIR(st.st_mode) ? handled : (handled & kFileRights);
  return add_rule(ruleset, fd, access, error, what);
}

bool add_path_rule(int ruleset, const std::string& path, uint64_t handled, std::string* error) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) return true;  // missing roots are skipped, as in the reference
  return add_fd_rule(ruleset, fd.get(), handled, error, path);
}

// Grant every entry of `root` except `.git`; the root itself stays read-only. Symlinks are not
// followed (a link to the outside must not widen the grant) and special files are skipped.
bool add_children_rules(int ruleset, const std::string& root, uint64_t handled,
                        std::string* error) {
  int dfd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return true;
  DIR* dir = ::fdopendir(dfd);
  if (!dir) {
    ::close(dfd);
    return true;
  }
  bool ok = true;
  while (dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || name == ".git") continue;
    UniqueFd fd(::openat(dfd, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) continue;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) continue;
    if (!add_fd_rule(ruleset, fd.get(), handled, error, root + "/" + e->d_name)) {
      ok = false;
      break;
    }
  }
  ::closedir(dir);
  return ok;
}

}  // namespace

int abi_version() {
  static const int abi = detect_abi();
  return abi;
}

uint64_t handled_fs_rights(int abi) {
  if (abi <= 0) return 0;
  uint64_t r = (1ull << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

UniqueFd build_ruleset(const RulesetSpec& spec, int abi, std::string* error) {
  if (abi <= 0) {
    if (error) *error = "Landlock is not available on this kernel";
    return {};
  }
  const uint64_t handled = handled_fs_rights(abi);
  RulesetAttr attr{};
  attr.handled_access_fs = handled;
  if (abi >= 4 && spec.restrict_network) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) {
    if (spec.scope_signals) attr.scoped |= kScopeSignal;
    if (spec.restrict_network) attr.scoped |= kScopeAbstractUnix;
  }
  UniqueFd ruleset(
      fd_above_stdio(int(::syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0))));
  if (!ruleset) {
    if (error) *error = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return {};
  }
  const int rs = ruleset.get();
  // Reading and executing anywhere; writing only below the roots and to a few harmless devices.
  if (!add_path_rule(rs, "/", kReadRights, error)) return {};
  for (const char* dev : {"/dev/null", "/dev/zero"})
    if (!add_path_rule(rs, dev, handled & kFileRights, error)) return {};
  for (const auto& root : spec.writable_roots) {
    bool ok = root.exclude_git_by_children ? add_children_rules(rs, root.path, handled, error)
                                           : add_path_rule(rs, root.path, handled, error);
    if (!ok) return {};
  }
  return ruleset;
}

int restrict_self(int ruleset_fd) noexcept {
  if (::syscall(__NR_landlock_restrict_self, ruleset_fd, 0) == 0) return 0;
  return errno;
}

}  // namespace llmx::sandbox::landlock
