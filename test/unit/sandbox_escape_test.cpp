// Escape suite for the Linux sandbox, file system and network (engine.md §6.4, DECISIONS E11,
// issue 11): real children try to write outside the writable roots, change metadata, make
// devices, write any `.git`, and reach the network. Every outcome is judged from outside the
// sandbox (did the content, mode, owner, time or xattr really change?). Processes, secrets and
// capabilities are in sandbox_escape_process_test.cpp.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <sys/wait.h>

#include "sandbox/process_spawn.hpp"
#include "test/unit/escape_fixture.hpp"

using namespace llmx;
using namespace llmx::escape;

namespace {

struct FileFacts {
  std::string content;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  timespec mtime{};
  std::string xattr;
  bool operator==(const FileFacts& o) const {
    return content == o.content && mode == o.mode && uid == o.uid && gid == o.gid &&
           mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec && xattr == o.xattr;
  }
};

FileFacts facts(const std::string& path) {
  FileFacts f;
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  f.content = S_ISREG(st.st_mode) ? slurp(path) : "";
  f.mode = st.st_mode;
  f.uid = st.st_uid;
  f.gid = st.st_gid;
  f.mtime = st.st_mtim;
  char buf[256];
  ssize_t n = ::lgetxattr(path.c_str(), "user.llmx", buf, sizeof buf);
  if (n > 0) f.xattr.assign(buf, size_t(n));
  return f;
}

// A shell script that tries every metadata change on `path`, each on its own.
std::string metadata_attack(const std::string& path) {
  std::string p = "'" + path + "'";
  std::string s = "chmod 777 " + p + "; chown 12345:12345 " + p + "; touch -d 2001-01-01 -c " + p +
                  "; chmod u+s " + p + "; chgrp 0 " + p;
  if (::access(kPython, X_OK) == 0)
    s += std::string("; ") + kPython + " -c 'import os, sys; os.setxattr(sys.argv[1], \"user.llmx\", b\"x\")' " + p;
  return s + "; exit 1";
}

}  // namespace

// ------------------------------------------------------------------------ workspace-write: files

TEST_CASE_FIXTURE(Escape, "escape/ww: legitimate writes in the workspace and /tmp succeed") {
  const std::string tmp_file = "/tmp/llmx-escape-ok-" + std::to_string(::getpid());
  ExecResult r =
      ww("echo new > new.txt && echo more >> README && mkdir -p build/x && echo o > build/x/o "
         "&& rm src/main.c && mv README README.md && echo t > " +
         tmp_file + " && chmod 700 new.txt && touch -d 2001-01-01 build/x/o && cat new.txt");
  CAPTURE(r.aggregated);
  CHECK(r.sandboxed);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "new\n");
  CHECK(slurp(ws + "/README.md") == "readme\nmore\n");
  CHECK(slurp(ws + "/build/x/o") == "o\n");
  CHECK((fs::status(ws + "/new.txt").permissions() & fs::perms::all) == fs::perms::owner_all);
  CHECK_FALSE(fs::exists(ws + "/src/main.c"));
  CHECK(slurp(tmp_file) == "t\n");
  ::unlink(tmp_file.c_str());
}

TEST_CASE_FIXTURE(Escape, "escape/ww: direct writes outside the roots fail") {
  EXPECT_DENIED(ww("echo pwned > " + secret), kReadOnlyFs);
  EXPECT_DENIED(ww("touch " + outside + "/new"), kReadOnlyFs);
  EXPECT_DENIED(ww("truncate -s 0 " + secret), kReadOnlyFs);
  EXPECT_DENIED(ww("rm -f " + secret), kReadOnlyFs);
  EXPECT_DENIED(ww("mv " + secret + " stolen"), kReadOnlyFs);  // copied, but not removed
  EXPECT_DENIED(ww("echo x > /dev/shm/llmx-escape"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo x > /root/.llmx-escape"), kReadOnlyFs);
  CHECK(slurp(secret) == "orig\n");
  CHECK_FALSE(fs::exists(outside + "/new"));
  CHECK_FALSE(fs::exists("/dev/shm/llmx-escape"));
}

TEST_CASE_FIXTURE(Escape, "escape/ww: writes through .., symlinks and /proc/self fail") {
  EXPECT_DENIED(ww("echo pwned > ../outside/secret.txt"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo pwned > dirlink/secret.txt"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo pwned > filelink"), kReadOnlyFs);
  // A symlink made inside the sandbox is allowed, writing through it is not.
  EXPECT_DENIED(ww("ln -s " + outside + " mylink && echo pwned > mylink/secret.txt"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo pwned > /proc/self/root" + secret), kReadOnlyFs);
  EXPECT_DENIED(ww("echo pwned > /proc/self/cwd/../outside/secret.txt"), kReadOnlyFs);
  CHECK(slurp(secret) == "orig\n");
}

TEST_CASE_FIXTURE(
    Escape,
    "escape/ww: hard links: new ones to the outside fail, a pre-existing one is a known gap") {
  EXPECT_DENIED(ww("ln " + secret + " h2"), "Invalid cross-device link");
  CHECK_FALSE(fs::exists(ws + "/h2"));
  // KNOWN GAP (documented in the README): mounts and Landlock both judge by path, and `hard`
  // lies inside the workspace. A hard link that someone created before the command lets it write
  // the outside file's content (not its name, mode or owner).
  ExecResult r = ww("echo pwned > hard");
  CHECK(r.exit_code == 0);
  CHECK(slurp(outside + "/hard.txt") == "pwned\n");
}

TEST_CASE_FIXTURE(Escape, "escape: metadata outside the roots cannot change, in either mode") {
  ::setxattr(secret.c_str(), "user.llmx", "orig", 4, 0);
  const FileFacts before = facts(secret), git_before = facts(ws + "/.git/config"),
                  readme_before = facts(ws + "/README"), outside_before = facts(outside);
  for (SandboxMode mode : {SandboxMode::workspace_write, SandboxMode::read_only}) {
    CAPTURE(mode);
    ExecResult r = run(mode, metadata_attack(secret));
    CAPTURE(r.aggregated);
    CHECK(r.sandboxed);
    CHECK(has(r.aggregated, kReadOnlyFs));
    CHECK(facts(secret) == before);
    run(mode, metadata_attack(ws + "/.git/config"));
    CHECK(facts(ws + "/.git/config") == git_before);
    run(mode, metadata_attack(outside));
    CHECK(facts(outside) == outside_before);
  }
  // Read-only mode: the workspace itself is outside every root.
  run(SandboxMode::read_only, metadata_attack(ws + "/README"));
  CHECK(facts(ws + "/README") == readme_before);
}

TEST_CASE_FIXTURE(Escape, "escape/ww: chown to another uid fails even inside the workspace") {
  ExecResult r = ww("echo x > mine && chown 12345 mine; chown 0:12345 mine; exit 1");
  CHECK(has(r.aggregated, "Operation not permitted"));
  struct stat st {};
  REQUIRE(::stat((ws + "/mine").c_str(), &st) == 0);
  CHECK(st.st_uid == ::geteuid());
  CHECK(st.st_gid == ::getegid());
}

TEST_CASE_FIXTURE(Escape, "escape/ww: devices can neither be made nor opened in the workspace") {
  EXPECT_DENIED(ww("mknod kmsg c 1 11"), "Operation not permitted");
  CHECK_FALSE(fs::exists(ws + "/kmsg"));
  if (::geteuid() != 0) return;
  // One that already exists (made by root outside) does not open: the roots are mounted nodev.
  REQUIRE(::mknod((ws + "/null-dev").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  EXPECT_DENIED(ww("echo x > null-dev"), "Permission denied");
  EXPECT_DENIED(ww("cat null-dev"), "Permission denied");
}

TEST_CASE_FIXTURE(Escape,
                  "escape/ww: open_by_handle_at cannot reopen an outside file for writing") {
  if (::access(kPython, X_OK) != 0) return;
  spit(base + "/obh.py", R"(import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [("n", ctypes.c_uint), ("t", ctypes.c_int), ("h", ctypes.c_ubyte * 128)]
fh = FH(); fh.n = 128; mid = ctypes.c_int()
if libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(fh), ctypes.byref(mid), 0) != 0:
    print("name_to_handle_at:", os.strerror(ctypes.get_errno())); sys.exit(3)
fd = libc.open_by_handle_at(os.open(".", os.O_RDONLY), ctypes.byref(fh), os.O_WRONLY)
if fd < 0:
    print("open_by_handle_at:", os.strerror(ctypes.get_errno())); sys.exit(4)
os.write(fd, b"pwned"); sys.exit(0)
)");
  ExecResult r = ww(std::string(kPython) + " " + base + "/obh.py " + secret);
  CAPTURE(r.aggregated);
  CHECK(r.exit_code == 4);
  CHECK(r.stdout_text == "open_by_handle_at: Operation not permitted\n");  // no capability left
  CHECK(slurp(secret) == "orig\n");
}

// -------------------------------------------------------------------------- workspace-write: .git

TEST_CASE_FIXTURE(Escape, "escape/ww: .git stays read-only (bind mount)") {
  EXPECT_DENIED(ww("echo x > .git/config"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo x > .git/hooks/pre-commit"), kReadOnlyFs);
  EXPECT_DENIED(ww("ln -s ../../evil.sh .git/hooks/post-checkout"), kReadOnlyFs);
  EXPECT_DENIED(ww("cd .git && echo x > new"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo x > /proc/self/cwd/.git/config"), kReadOnlyFs);
  EXPECT_DENIED(ww("mv .git moved"), "Device or resource busy");
  EXPECT_DENIED(ww("rm -rf .git"), kReadOnlyFs);
  EXPECT_DENIED(ww("umount .git; echo x > .git/config"), kReadOnlyFs);
  // rename() gets EXDEV (another mount); mv's copy fallback then hits the read-only mount.
  EXPECT_DENIED(ww("mv src/main.c .git/x"), kReadOnlyFs);
  CHECK(fs::exists(ws + "/src/main.c"));
  CHECK(slurp(ws + "/.git/config") == "[core]\n");
  CHECK(slurp(ws + "/.git/HEAD") == "ref: refs/heads/main\n");
  CHECK_FALSE(fs::exists(ws + "/.git/hooks/pre-commit"));
  CHECK_FALSE(fs::exists(ws + "/.git/hooks/post-checkout"));
  CHECK_FALSE(fs::exists(ws + "/moved"));
  // The bind mount lives in the child's namespace only: the server still writes .git.
  spit(ws + "/.git/server-side", "ok");
  CHECK(slurp(ws + "/.git/server-side") == "ok");
}

// A .git found when the sandbox was planned may be gone when the child mounts (another process
// removed that repository): nothing is left to protect, so the command still starts.
TEST_CASE_FIXTURE(Escape, "escape/ww: a .git removed between plan and start does not fail the spawn") {
  fs::create_directories(ws + "/gone/.git");
  SpawnRequest r = request(SandboxMode::workspace_write, "exit 0");
  r.cwd = r.sandbox_cwd = ws + "/gone";
  PreparedSpawn spawn;
  std::string error;
  REQUIRE(spawn.prepare(r, &error));
  fs::remove_all(ws + "/gone/.git");
  ChildProcess child;
  CHECK_MESSAGE(spawn.start(child, &error), error);
  if (child.pid > 0) {
    int status = 0;
    ::waitpid(child.pid, &status, 0);
  }
}

TEST_CASE_FIXTURE(Escape, "escape/ww: nested repositories' .git and submodule gitlinks are read-only too") {
  fs::create_directories(ws + "/vendor/lib/.git/hooks");
  spit(ws + "/vendor/lib/.git/config", "[core]\n");
  fs::create_directories(ws + "/deps/a/b/c/sub");
  spit(ws + "/deps/a/b/c/sub/.git", "gitdir: ../../../../../.git/modules/sub\n");  // a submodule
  EXPECT_DENIED(ww("echo x > vendor/lib/.git/hooks/pre-commit"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo x >> vendor/lib/.git/config"), kReadOnlyFs);
  EXPECT_DENIED(ww("echo 'gitdir: /tmp/evil' > deps/a/b/c/sub/.git"), kReadOnlyFs);
  EXPECT_DENIED(ww("rm -rf vendor/lib/.git"), kReadOnlyFs);
  CHECK(slurp(ws + "/vendor/lib/.git/config") == "[core]\n");
  CHECK_FALSE(fs::exists(ws + "/vendor/lib/.git/hooks/pre-commit"));
  CHECK(slurp(ws + "/deps/a/b/c/sub/.git") == "gitdir: ../../../../../.git/modules/sub\n");
  // The rest of the nested trees stays writable.
  ExecResult r = ww("echo ok > vendor/lib/file && echo ok > deps/a/b/c/sub/file");
  CHECK(r.exit_code == 0);
  // A repository made by an earlier command is found by the next one.
  CHECK(ww("mkdir -p later/.git && echo x > later/.git/config").exit_code == 0);
  EXPECT_DENIED(ww("echo y > later/.git/config"), kReadOnlyFs);
  CHECK(slurp(ws + "/later/.git/config") == "x\n");
}

TEST_CASE_FIXTURE(Escape, "escape/ww: git status, diff and log work in a real repository") {
  if (::access("/usr/bin/git", X_OK) != 0) return;
  const std::string repo = ws + "/repo";
  const std::string git = "cd '" + repo + "' && git -c user.email=t@t -c user.name=t ";
  REQUIRE(std::system(("mkdir -p '" + repo + "' && cd '" + repo +
                       "' && git init -q && echo a > a.txt && git add a.txt && git -c "
                       "user.email=t@t -c user.name=t commit -qm init")
                          .c_str()) == 0);
  for (SandboxMode mode : {SandboxMode::workspace_write, SandboxMode::read_only}) {
    CAPTURE(mode);
    if (mode == SandboxMode::workspace_write) spit(repo + "/a.txt", "b\n");
    ExecResult r = run(mode, "export HOME=/nonexistent; cd repo && git status --porcelain && git "
                             "diff --stat && git log --oneline | wc -l");
    CAPTURE(r.aggregated);
    CHECK(r.exit_code == 0);
    CHECK(has(r.stdout_text, " M a.txt\n"));
    CHECK(has(r.stdout_text, "1 file changed"));
  }
  EXPECT_DENIED(ww(git + "commit -qam change"), kReadOnlyFs);
}

TEST_CASE_FIXTURE(Escape, "escape/ww: .git protection in a user namespace (unprivileged mode)") {
  SandboxOptions o;
  o.isolation = Isolation::user_namespace;
  EXPECT_DENIED(ww("echo x > .git/config", o), kReadOnlyFs);
  EXPECT_DENIED(ww("mv .git moved", o), "Device or resource busy");
  EXPECT_DENIED(ww("rm -rf .git", o), kReadOnlyFs);
  EXPECT_DENIED(ww("echo pwned > " + secret, o), kReadOnlyFs);
  ExecResult r = ww("echo ok > new.txt && id -u && grep CapEff /proc/self/status", o);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == std::to_string(::geteuid()) + "\nCapEff:\t0000000000000000\n");
  CHECK(slurp(ws + "/.git/config") == "[core]\n");
}

TEST_CASE_FIXTURE(Escape, "escape/ww: .git protection with Landlock only (no namespaces)") {
  SandboxOptions o;
  o.isolation = Isolation::landlock_only;
  EXPECT_DENIED(ww("echo x > .git/config", o), "Permission denied");
  EXPECT_DENIED(ww("mv .git moved", o), "Permission denied");
  EXPECT_DENIED(ww("rm -rf .git", o), "Permission denied");
  EXPECT_DENIED(ww("ln -s x .git/hooks/pre-commit", o), "Permission denied");
  EXPECT_DENIED(ww("echo pwned > " + secret, o), "Permission denied");
  ExecResult r = ww("echo more >> README && echo n > src/new.c && mkdir src/d && rm src/main.c", o);
  CHECK(r.exit_code == 0);
  // The price of this mode: entries cannot be created or removed directly in the root.
  EXPECT_DENIED(ww("echo x > new-top-level.txt", o), "Permission denied");
  CHECK(slurp(ws + "/.git/config") == "[core]\n");
  CHECK(fs::exists(ws + "/.git/HEAD"));
}

TEST_CASE_FIXTURE(Escape, "escape/ww: allow_git_writes lets the command write every .git") {
  fs::create_directories(ws + "/sub/.git");
  SandboxOptions o;
  o.allow_git_writes = true;
  ExecResult r = ww("echo x > .git/config && echo y > sub/.git/config", o);
  CHECK(r.exit_code == 0);
  CHECK(slurp(ws + "/.git/config") == "x\n");
  CHECK(slurp(ws + "/sub/.git/config") == "y\n");
}

// ----------------------------------------------------------------------- workspace-write: network

TEST_CASE_FIXTURE(Escape, "escape/ww: TCP, UDP, raw and unix-socket connections fail") {
  const std::string port = std::to_string(tcp_port);
  if (::access("/bin/bash", X_OK) == 0) {
    ExecResult r = ww("/bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + "'");
    CHECK(r.exit_code != 0);
    CHECK(has(r.stderr_text, "Operation not permitted"));
  }
  if (::access(kPython, X_OK) == 0) {
    const std::string py = std::string(kPython) + " -c ";
    EXPECT_DENIED(
        ww(py + "'import socket; socket.create_connection((\"127.0.0.1\", " + port + "))'"),
        "PermissionError: [Errno 1] Operation not permitted");
    EXPECT_DENIED(ww(py +
                     "'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                     "s.sendto(b\"x\", (\"127.0.0.1\", " +
                     std::to_string(udp_port) + "))'"),
                  "Operation not permitted");
    EXPECT_DENIED(
        ww(py +
           "'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'"),
        "Operation not permitted");
    EXPECT_DENIED(ww(py + "'import socket; socket.socket(socket.AF_INET6, socket.SOCK_STREAM)'"),
                  "Operation not permitted");
    EXPECT_DENIED(ww(py + "'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'"),
                  "Operation not permitted");
    // AF_UNIX sockets may be created (local IPC such as socketpair), but not connected.
    EXPECT_DENIED(
        ww(py +
           "'import socket; s = socket.socket(socket.AF_UNIX); print(\"created\"); s.connect(\"" +
           unix_path + "\")'"),
        "created\n");
    ExecResult pair = ww(py + "'import socket; a, b = socket.socketpair(); print(\"pair\")'");
    CHECK(pair.exit_code == 0);
    CHECK(pair.stdout_text == "pair\n");
    // io_uring would submit connect() without a syscall the filter sees.
    EXPECT_DENIED(ww(py + "'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                          "p = ctypes.create_string_buffer(120); "
                          "r = libc.syscall(425, 4, p); "
                          "print(\"io_uring_setup\", r, os.strerror(ctypes.get_errno()))'; exit 1"),
                  "io_uring_setup -1 Operation not permitted");
  }
  CHECK_FALSE(tcp_got_connection());
  CHECK_FALSE(udp_got_datagram());
  CHECK_FALSE(unix_got_connection());
}

TEST_CASE_FIXTURE(Escape, "escape/ww: with network_access the same TCP connect succeeds") {
  if (::access("/bin/bash", X_OK) != 0) return;
  ExecResult r =
      run(SandboxMode::workspace_write,
          "/bin/bash -c 'echo hi >/dev/tcp/127.0.0.1/" + std::to_string(tcp_port) + "' && env", {},
          /*network=*/true);
  CAPTURE(r.aggregated);
  CHECK(r.exit_code == 0);
  CHECK(tcp_got_connection());
  CHECK_FALSE(has(r.stdout_text, "LLMX_SANDBOX_NETWORK_DISABLED"));
}

// ------------------------------------------------------------------------------------- read-only

TEST_CASE_FIXTURE(Escape, "escape/ro: nothing is writable, reading works, no network") {
  EXPECT_DENIED(ro("echo x > new.txt"), kReadOnlyFs);
  EXPECT_DENIED(ro("echo x >> README"), kReadOnlyFs);
  EXPECT_DENIED(ro("echo x > /tmp/llmx-escape-ro"), kReadOnlyFs);
  EXPECT_DENIED(ro("echo pwned > " + secret), kReadOnlyFs);
  EXPECT_DENIED(ro("echo pwned > ../outside/secret.txt"), kReadOnlyFs);
  EXPECT_DENIED(ro("echo pwned > dirlink/secret.txt"), kReadOnlyFs);
  EXPECT_DENIED(ro("echo pwned > hard"), kReadOnlyFs);  // no writable root at all
  EXPECT_DENIED(ro("echo pwned > /proc/self/root" + secret), kReadOnlyFs);
  EXPECT_DENIED(ro("echo x > .git/config"), kReadOnlyFs);
  EXPECT_DENIED(ro("rm -rf .git"), kReadOnlyFs);
  EXPECT_DENIED(ro("mknod kmsg c 1 11"), kReadOnlyFs);
  if (::access("/bin/bash", X_OK) == 0)
    EXPECT_DENIED(ro("/bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(tcp_port) + "'"),
                  "Operation not permitted");
  CHECK_FALSE(tcp_got_connection());
  ExecResult r = ro("cat " + secret + " README && echo x > /dev/null && env | grep -c KEY");
  CHECK(r.stdout_text == "orig\nreadme\n0\n");
  CHECK(slurp(secret) == "orig\n");
  CHECK(slurp(ws + "/README") == "readme\n");
  CHECK(slurp(outside + "/hard.txt") == "orig\n");
  CHECK_FALSE(fs::exists("/tmp/llmx-escape-ro"));
}

TEST_CASE_FIXTURE(Escape, "escape/danger-full-access: no restrictions (control)") {
  ExecResult r =
      run(SandboxMode::danger_full_access, "echo ok > " + outside + "/free && echo x > .git/y");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.sandboxed);
  CHECK(slurp(outside + "/free") == "ok\n");
}
