// Escape suite for the Linux sandbox (engine.md §6.4, DECISIONS E11): real children try to write
// outside the writable roots, into .git, to reach the network, to read secrets and to signal the
// server. Every case asserts the exact outcome; the two known gaps (pre-existing hard links,
// chmod/chown) assert that they are gaps, so a kernel that closes them makes the test say so.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include "sandbox/exec_env.hpp"
#include "sandbox/process.hpp"
#include "sandbox/process_fd.hpp"

using namespace llmx;
using namespace llmx::sandbox;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct Waiter : ProcessHandler {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<ExecResult> result;
  void on_exit(ExecResult r) override {
    std::lock_guard lock(mu);
    result = std::move(r);
    cv.notify_all();
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

const char* kPython = "/usr/bin/python3";

// A workspace (a git checkout) and an "outside" directory next to it. Not under /tmp, which is a
// writable root in workspace-write.
struct Escape {
  std::string base, ws, outside, secret;
  int tcp_port = 0, udp_port = 0;
  UniqueFd tcp, udp, unix_listener;
  std::string unix_path;
  ProcessLoop loop;

  Escape() {
    std::string parent = fs::current_path().string();
    if (parent.rfind("/tmp", 0) == 0) parent = "/var/tmp";
    std::string tmpl = parent + "/llmx-escape-XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()));
    base = tmpl;
    ws = base + "/ws";
    outside = base + "/outside";
    secret = outside + "/secret.txt";
    fs::create_directories(ws + "/.git/hooks");
    fs::create_directories(ws + "/src");
    fs::create_directories(outside);
    spit(ws + "/.git/config", "[core]\n");
    spit(ws + "/.git/HEAD", "ref: refs/heads/main\n");
    spit(ws + "/src/main.c", "int main;\n");
    spit(ws + "/README", "readme\n");
    spit(secret, "orig\n");
    spit(outside + "/hard.txt", "orig\n");
    REQUIRE(::link((outside + "/hard.txt").c_str(), (ws + "/hard").c_str()) == 0);
    fs::create_directory_symlink(outside, ws + "/dirlink");
    fs::create_symlink(secret, ws + "/filelink");
    listen_sockets();
  }
  ~Escape() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }

  void listen_sockets() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    tcp.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(tcp.get(), (sockaddr*)&a, sizeof a) == 0);
    REQUIRE(::listen(tcp.get(), 8) == 0);
    ::getsockname(tcp.get(), (sockaddr*)&a, &len);
    tcp_port = ntohs(a.sin_port);
    a.sin_port = 0;
    udp.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(udp.get(), (sockaddr*)&a, sizeof a) == 0);
    len = sizeof a;
    ::getsockname(udp.get(), (sockaddr*)&a, &len);
    udp_port = ntohs(a.sin_port);
    unix_path = base + "/sock";
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    std::snprintf(u.sun_path, sizeof u.sun_path, "%s", unix_path.c_str());
    unix_listener.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(unix_listener.get(), (sockaddr*)&u, sizeof u) == 0);
    REQUIRE(::listen(unix_listener.get(), 8) == 0);
  }

  bool tcp_got_connection() {
    pollfd p{tcp.get(), POLLIN, 0};
    return ::poll(&p, 1, 100) > 0;
  }
  bool udp_got_datagram() {
    pollfd p{udp.get(), POLLIN, 0};
    return ::poll(&p, 1, 100) > 0;
  }
  bool unix_got_connection() {
    pollfd p{unix_listener.get(), POLLIN, 0};
    return ::poll(&p, 1, 100) > 0;
  }

  ExecResult run(SandboxMode mode, const std::string& script, SandboxOptions options = {},
                 bool network = false) {
    SandboxPolicy policy;
    policy.mode = mode;
    policy.network_access = network;
    policy.exclude_tmpdir_env_var = true;  // $TMPDIR could contain this test's directories
    // The parent holds secrets; the default env policy must keep them from the child.
    EnvMap parent = {{"PATH", "/usr/bin:/bin"},    {"HOME", "/root"},
                     {"MY_API_KEY", "sk-secret"},  {"GITHUB_TOKEN", "ghp-secret"},
                     {"DB_PASSWORD_SECRET", "pw"}, {"LANG", "C"}};
    SpawnRequest r;
    r.argv = {"/bin/sh", "-c", script};
    r.cwd = ws;
    r.sandbox_cwd = ws;
    r.env = build_child_env({}, parent, !policy.has_network());
    r.sandbox = policy;
    r.sandbox_options = options;
    r.timeout_ms = 20000;
    auto w = std::make_shared<Waiter>();
    loop.spawn(std::move(r), w);
    std::unique_lock lock(w->mu);
    REQUIRE(w->cv.wait_for(lock, 30s, [&] { return w->result.has_value(); }));
    CHECK(w->result->spawn_error == "");
    return *w->result;
  }
  ExecResult ww(const std::string& script, SandboxOptions o = {}) {
    return run(SandboxMode::workspace_write, script, o);
  }
  ExecResult ro(const std::string& script) { return run(SandboxMode::read_only, script); }
};

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The command ran sandboxed, failed, and said why.
#define EXPECT_DENIED(res, message)     \
  do {                                  \
    ExecResult r_ = (res);              \
    CAPTURE(r_.aggregated);             \
    CHECK(r_.sandboxed);                \
    CHECK(r_.exit_code != 0);           \
    CHECK(has(r_.aggregated, message)); \
  } while (0)

}  // namespace

// ------------------------------------------------------------------------ workspace-write: files

TEST_CASE_FIXTURE(Escape, "escape/ww: legitimate writes in the workspace and /tmp succeed") {
  const std::string tmp_file = "/tmp/llmx-escape-ok-" + std::to_string(::getpid());
  ExecResult r =
      ww("echo new > new.txt && echo more >> README && mkdir -p build/x && echo o > build/x/o "
         "&& rm src/main.c && mv README README.md && echo t > " +
         tmp_file + " && cat new.txt");
  CAPTURE(r.aggregated);
  CHECK(r.sandboxed);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "new\n");
  CHECK(slurp(ws + "/README.md") == "readme\nmore\n");
  CHECK(slurp(ws + "/build/x/o") == "o\n");
  CHECK_FALSE(fs::exists(ws + "/src/main.c"));
  CHECK(slurp(tmp_file) == "t\n");
  ::unlink(tmp_file.c_str());
}

TEST_CASE_FIXTURE(Escape, "escape/ww: direct writes outside the roots fail") {
  EXPECT_DENIED(ww("echo pwned > " + secret), "Permission denied");
  EXPECT_DENIED(ww("touch " + outside + "/new"), "Permission denied");
  EXPECT_DENIED(ww("truncate -s 0 " + secret), "Permission denied");
  EXPECT_DENIED(ww("rm -f " + secret), "Permission denied");
  EXPECT_DENIED(ww("mv " + secret + " stolen"), "Permission denied");
  EXPECT_DENIED(ww("echo x > /dev/shm/llmx-escape"), "Permission denied");
  EXPECT_DENIED(ww("echo x > /root/.llmx-escape"), "Permission denied");
  CHECK(slurp(secret) == "orig\n");
  CHECK_FALSE(fs::exists(outside + "/new"));
  CHECK_FALSE(fs::exists(ws + "/stolen"));
}

TEST_CASE_FIXTURE(Escape, "escape/ww: writes through .., symlinks and /proc/self fail") {
  EXPECT_DENIED(ww("echo pwned > ../outside/secret.txt"), "Permission denied");
  EXPECT_DENIED(ww("echo pwned > dirlink/secret.txt"), "Permission denied");
  EXPECT_DENIED(ww("echo pwned > filelink"), "Permission denied");
  // A symlink made inside the sandbox is allowed, writing through it is not.
  EXPECT_DENIED(ww("ln -s " + outside + " mylink && echo pwned > mylink/secret.txt"),
                "Permission denied");
  EXPECT_DENIED(ww("echo pwned > /proc/self/root" + secret), "Permission denied");
  EXPECT_DENIED(ww("echo pwned > /proc/self/cwd/../outside/secret.txt"), "Permission denied");
  CHECK(slurp(secret) == "orig\n");
}

TEST_CASE_FIXTURE(
    Escape,
    "escape/ww: hard links: new ones to the outside fail; a pre-existing one is a known gap") {
  EXPECT_DENIED(ww("ln " + secret + " h2"), "Invalid cross-device link");
  CHECK_FALSE(fs::exists(ws + "/h2"));
  // KNOWN GAP: Landlock checks the path, and `hard` lies inside the workspace. A hard link that
  // someone created before the sandbox lets the command write the outside file's content.
  ExecResult r = ww("echo pwned > hard");
  CHECK(r.exit_code == 0);
  CHECK(slurp(outside + "/hard.txt") == "pwned\n");
}

TEST_CASE_FIXTURE(Escape, "escape/ww: metadata changes outside the roots are a known gap") {
  // KNOWN GAP: Landlock (up to ABI 7) does not cover chmod/chown/utimes/xattrs.
  ExecResult r = ww("chmod 600 " + secret + " && touch -d 2001-01-01 -c " + secret);
  CHECK(r.exit_code == 0);
  CHECK((fs::status(secret).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(slurp(secret) == "orig\n");  // content stays protected
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
  CHECK(r.stdout_text == "open_by_handle_at: Permission denied\n");
  CHECK(slurp(secret) == "orig\n");
}

// -------------------------------------------------------------------------- workspace-write: .git

TEST_CASE_FIXTURE(Escape, "escape/ww: .git stays read-only (bind mount)") {
  EXPECT_DENIED(ww("echo x > .git/config"), "Read-only file system");
  EXPECT_DENIED(ww("echo x > .git/hooks/pre-commit"), "Read-only file system");
  EXPECT_DENIED(ww("ln -s ../../evil.sh .git/hooks/post-checkout"), "Read-only file system");
  EXPECT_DENIED(ww("cd .git && echo x > new"), "Read-only file system");
  EXPECT_DENIED(ww("echo x > /proc/self/cwd/.git/config"), "Read-only file system");
  EXPECT_DENIED(ww("mv .git moved"), "Device or resource busy");
  EXPECT_DENIED(ww("rm -rf .git"), "Read-only file system");
  EXPECT_DENIED(ww("umount .git; echo x > .git/config"), "Read-only file system");
  // rename() gets EXDEV (another mount); mv's copy fallback then hits the read-only mount.
  EXPECT_DENIED(ww("mv src/main.c .git/x"), "Read-only file system");
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

TEST_CASE_FIXTURE(Escape, "escape/ww: .git protection in a user namespace (unprivileged mode)") {
  SandboxOptions o;
  o.git_protection = GitProtection::user_namespace;
  EXPECT_DENIED(ww("echo x > .git/config", o), "Read-only file system");
  EXPECT_DENIED(ww("mv .git moved", o), "Device or resource busy");
  EXPECT_DENIED(ww("rm -rf .git", o), "Read-only file system");
  EXPECT_DENIED(ww("echo pwned > " + secret, o), "Permission denied");
  ExecResult r = ww("echo ok > new.txt && id -u", o);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == std::to_string(::geteuid()) + "\n");  // same uid inside
  CHECK(slurp(ws + "/.git/config") == "[core]\n");
}

TEST_CASE_FIXTURE(Escape, "escape/ww: .git protection with Landlock only (no namespaces)") {
  SandboxOptions o;
  o.git_protection = GitProtection::children_only;
  EXPECT_DENIED(ww("echo x > .git/config", o), "Permission denied");
  EXPECT_DENIED(ww("mv .git moved", o), "Permission denied");
  EXPECT_DENIED(ww("rm -rf .git", o), "Permission denied");
  EXPECT_DENIED(ww("ln -s x .git/hooks/pre-commit", o), "Permission denied");
  ExecResult r = ww("echo more >> README && echo n > src/new.c && mkdir src/d && rm src/main.c", o);
  CHECK(r.exit_code == 0);
  // The price of this mode: entries cannot be created or removed directly in the root.
  EXPECT_DENIED(ww("echo x > new-top-level.txt", o), "Permission denied");
  CHECK(slurp(ws + "/.git/config") == "[core]\n");
  CHECK(fs::exists(ws + "/.git/HEAD"));
}

TEST_CASE_FIXTURE(Escape, "escape/ww: allow_git_writes lets the command write .git") {
  SandboxOptions o;
  o.allow_git_writes = true;
  ExecResult r = ww("echo x > .git/config", o);
  CHECK(r.exit_code == 0);
  CHECK(slurp(ws + "/.git/config") == "x\n");
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

// ----------------------------------------------------------------- workspace-write: env, signals

TEST_CASE_FIXTURE(Escape, "escape/ww: secrets in the server environment do not reach the child") {
  ExecResult r = ww("env");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(has(r.stdout_text, "MY_API_KEY"));
  CHECK_FALSE(has(r.stdout_text, "GITHUB_TOKEN"));
  CHECK_FALSE(has(r.stdout_text, "sk-secret"));
  CHECK_FALSE(has(r.stdout_text, "ghp-secret"));
  CHECK_FALSE(has(r.stdout_text, "DB_PASSWORD_SECRET"));
  CHECK(has(r.stdout_text, "LLMX_SANDBOX_NETWORK_DISABLED=1\n"));
  CHECK(has(r.stdout_text, "LANG=C\n"));
}

TEST_CASE_FIXTURE(Escape, "escape/ww: /proc/<server>/environ: a gap for root or dumpable servers") {
  // KNOWN GAP: Landlock does not guard /proc/<pid>/environ (nor maps, cmdline) of processes with
  // the same uid; only file permissions do. A root server, or one that skipped the §6.7
  // hardening (PR_SET_DUMPABLE 0), exposes its initial environment to sandboxed commands.
  ::setenv("LLMX_ESCAPE_MARKER", "x", 1);  // environ shows the exec-time env; anything will do
  ExecResult r = ww("head -c 1 /proc/" + std::to_string(::getpid()) + "/environ | wc -c");
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "1\n");
  // /proc/<pid>/mem, fd/ and cwd stay closed (ptrace checks, which Landlock scopes).
  const std::string proc = "/proc/" + std::to_string(::getpid());
  EXPECT_DENIED(ww("head -c 1 " + proc + "/mem"), "Permission denied");
  EXPECT_DENIED(ww("readlink " + proc + "/cwd || exit 1"), "");
  EXPECT_DENIED(ww("cat " + proc + "/fd/0"), "Permission denied");
}

TEST_CASE("escape: a non-root, non-dumpable server's environ is unreadable from the sandbox") {
  // The recommended deployment: llmx as a normal user with §6.7 hardening. Run the server side
  // in a forked child that becomes `nobody` and non-dumpable, then let its sandboxed command try.
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    ProcessLoop loop;
    SpawnRequest r;
    r.argv = {"/bin/sh", "-c", "cat /proc/" + std::to_string(::getpid()) + "/environ"};
    r.cwd = "/";
    r.env = {{"PATH", "/usr/bin:/bin"}};
    r.sandbox = SandboxPolicy{};  // read-only
    auto w = std::make_shared<Waiter>();
    loop.spawn(std::move(r), w);
    std::unique_lock lock(w->mu);
    if (!w->cv.wait_for(lock, 30s, [&] { return w->result.has_value(); })) ::_exit(11);
    const bool denied = w->result->sandboxed && w->result->exit_code == 1 &&
                        w->result->stdout_text.empty() &&
                        has(w->result->stderr_text, "Permission denied");
    ::_exit(denied ? 0 : 12);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE_FIXTURE(Escape, "escape/ww: the command cannot signal or trace the server") {
  const std::string pid = std::to_string(::getpid());
  EXPECT_DENIED(ww("kill -0 " + pid), "Operation not permitted");
  if (::access(kPython, X_OK) == 0)
    EXPECT_DENIED(ww(std::string(kPython) +
                     " -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                     "r = libc.ptrace(16, " +
                     pid + ", 0, 0); print(r, os.strerror(ctypes.get_errno())); exit(1)'"),
                  "-1 Operation not permitted");
  // Its own children remain signalable.
  CHECK(ww("sleep 10 & kill $! && wait $!; test $? = 143").exit_code == 0);
}

// ------------------------------------------------------------------------------------- read-only

TEST_CASE_FIXTURE(Escape, "escape/ro: nothing is writable, reading works, no network") {
  EXPECT_DENIED(ro("echo x > new.txt"), "Permission denied");
  EXPECT_DENIED(ro("echo x >> README"), "Permission denied");
  EXPECT_DENIED(ro("echo x > /tmp/llmx-escape-ro"), "Permission denied");
  EXPECT_DENIED(ro("echo pwned > " + secret), "Permission denied");
  EXPECT_DENIED(ro("echo pwned > ../outside/secret.txt"), "Permission denied");
  EXPECT_DENIED(ro("echo pwned > dirlink/secret.txt"), "Permission denied");
  EXPECT_DENIED(ro("echo pwned > hard"), "Permission denied");  // no writable root at all
  EXPECT_DENIED(ro("echo pwned > /proc/self/root" + secret), "Permission denied");
  EXPECT_DENIED(ro("echo x > .git/config"), "Permission denied");
  EXPECT_DENIED(ro("rm -rf .git"), "Permission denied");
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
