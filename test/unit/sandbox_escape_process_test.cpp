// Escape suite for the Linux sandbox, processes, secrets and capabilities (issue 11): a command
// must not read the API key (environment, /proc/<server>/environ, $LLMX_HOME/auth.json and
// .env), keep a capability, change the hostname, see or signal the server, or leave a process
// behind when it ends, is killed or times out. Judged from outside the sandbox; the same attacks
// run as root and as an unprivileged user.
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "sandbox/sandbox_policy.hpp"
#include "test/unit/escape_fixture.hpp"

using namespace llmx;
using namespace llmx::escape;

namespace {

std::string hostname() {
  utsname u{};
  ::uname(&u);
  return u.nodename;
}

// Runs `body` in a forked child that has become `nobody` (uid/gid 65534) and reports its verdict
// through the exit code (0 = every check held; otherwise the number of the first failed check).
template <class Body>
int as_nobody(Body body) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// Shell code that waits (at most 5 s) until each `sleep <token>` runs, as the command sees it.
std::string await_sleeps(std::initializer_list<std::string> tokens) {
  std::string s;
  for (const auto& t : tokens)
    s += "for i in $(seq 500); do pgrep -f '^sleep " + t + "$' >/dev/null && break; sleep 0.01; done; ";
  return s;
}

}  // namespace

// ----------------------------------------------------------------------------------------- secrets

TEST_CASE_FIXTURE(Escape, "escape: secrets in the server environment do not reach the child") {
  ExecResult r = ww("env");
  CHECK(r.exit_code == 0);
  for (const char* s : {"MY_API_KEY", "GITHUB_TOKEN", "sk-secret", "ghp-secret", "DB_PASSWORD_SECRET",
                        "MY_PASSWORD", "hunter2", "DATABASE_URL", "dburl-secret"})
    CHECK_FALSE(has(r.stdout_text, s));
  CHECK(has(r.stdout_text, "LLMX_SANDBOX_NETWORK_DISABLED=1\n"));
  CHECK(has(r.stdout_text, "LANG=C\n"));
}

TEST_CASE_FIXTURE(Escape, "escape: the server's /proc entries and $LLMX_HOME secrets are out of reach") {
  llmx::test::EnvGuard marker("LLMX_ESCAPE_MARKER", "sk-escape-marker");
  const std::string pid = std::to_string(::getpid());
  for (SandboxMode mode : {SandboxMode::workspace_write, SandboxMode::read_only}) {
    CAPTURE(mode);
    // The server is not in the command's PID namespace: its /proc entries do not exist.
    EXPECT_DENIED(run(mode, "cat /proc/" + pid + "/environ"), "No such file or directory");
    EXPECT_DENIED(run(mode, "cat /proc/" + pid + "/cmdline"), "No such file or directory");
    // Every environ it can see holds nothing of the server's, and only its own processes exist.
    ExecResult r = run(mode, "cat /proc/[0-9]*/environ | tr '\\0' '\\n' | grep -c LLMX_ESCAPE_MARKER; "
                             "ls -d /proc/[0-9]* | wc -l; cat /proc/1/cmdline | tr '\\0' ' '");
    CAPTURE(r.aggregated);
    CHECK(has(r.stdout_text, "0\n"));
    CHECK(has(r.stdout_text, "llmx-sandbox-init"));
    // The stored key and .env read as empty.
    r = run(mode, "cat " + home + "/auth.json " + home + "/.env; wc -c < " + home + "/auth.json");
    CAPTURE(r.aggregated);
    CHECK(r.exit_code == 0);
    CHECK(r.stdout_text == "0\n");
    run(mode, "echo x > " + home + "/auth.json");  // goes to /dev/null
  }
  CHECK(slurp(home + "/auth.json") == "{\"OPENAI_API_KEY\":\"sk-auth-secret\"}\n");
}

TEST_CASE_FIXTURE(Escape, "escape: the command cannot signal or trace the server") {
  const std::string pid = std::to_string(::getpid());
  EXPECT_DENIED(ww("kill -0 " + pid), "No such process");
  EXPECT_DENIED(ww("kill -9 -1; echo alive; exit 1"), "alive");  // only its own namespace
  if (::access(kPython, X_OK) == 0)
    EXPECT_DENIED(ww(std::string(kPython) +
                     " -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                     "r = libc.ptrace(16, " +
                     pid + ", 0, 0); print(r, os.strerror(ctypes.get_errno())); exit(1)'"),
                  "-1 Operation not permitted");
  // Its own children remain signalable, and so does the shell itself.
  CHECK(ww("sleep 10 & kill $! && wait $!; test $? = 143").exit_code == 0);
  CHECK(ww("kill -TERM $$; sleep 5").signal == SIGTERM);
}

// ------------------------------------------------------------------------------------ capabilities

TEST_CASE_FIXTURE(Escape, "escape: no capability survives and the hostname cannot change") {
  const std::string host = hostname();
  for (SandboxMode mode : {SandboxMode::workspace_write, SandboxMode::read_only}) {
    CAPTURE(mode);
    ExecResult r = run(mode, "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' /proc/self/status");
    CHECK(r.stdout_text ==
          "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
          "CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n");
    EXPECT_DENIED(run(mode, "hostname llmx-pwned"), "");
    if (::access(kPython, X_OK) == 0)
      EXPECT_DENIED(run(mode, std::string(kPython) +
                                  " -c 'import socket; socket.sethostname(\"llmx-pwned\")'"),
                    "Operation not permitted");
    // Even setuid binaries give nothing back (no_new_privs, no set-id on writable roots).
    EXPECT_DENIED(run(mode, "su -c true root </dev/null"), "");
  }
  CHECK(hostname() == host);
}

// --------------------------------------------------------------------------------------- processes

TEST_CASE_FIXTURE(Escape, "escape: no process outlives its command, in either mode") {
  for (SandboxMode mode : {SandboxMode::workspace_write, SandboxMode::read_only}) {
    CAPTURE(mode);
    const std::string daemon = unique_sleep_token(), child = unique_sleep_token(),
                      nohup = unique_sleep_token();
    auto w = std::make_shared<Waiter>();
    loop.spawn(request(mode, "setsid sleep " + daemon + " & (sleep " + child +
                                 " &) ; nohup sleep " + nohup + " >/dev/null 2>&1 & " +
                                 await_sleeps({daemon, child, nohup}) + "echo started; sleep 1"),
               w);
    REQUIRE(w->wait_output("started"));
    CHECK(processes_with(daemon) == 1);  // really running, seen from outside
    CHECK(processes_with(child) == 1);
    CHECK(processes_with(nohup) == 1);
    ExecResult r = w->wait();
    CHECK(r.exit_code == 0);
    CHECK(all_gone(daemon));
    CHECK(all_gone(child));
    CHECK(all_gone(nohup));
  }
}

TEST_CASE_FIXTURE(Escape, "escape: a kill or a timeout ends the command and every descendant") {
  for (bool timeout : {false, true}) {
    CAPTURE(timeout);
    const std::string daemon = unique_sleep_token(), top = unique_sleep_token();
    auto w = std::make_shared<Waiter>();
    SpawnRequest req = request(SandboxMode::workspace_write,
                               "setsid sleep " + daemon + " & " + await_sleeps({daemon}) +
                                   "echo started; exec sleep " + top);
    if (timeout) req.timeout_ms = 500;
    uint64_t id = loop.spawn(std::move(req), w);
    REQUIRE(w->wait_output("started"));
    REQUIRE(processes_with(top) + processes_with(daemon) >= 1);
    if (!timeout) loop.kill(id);
    ExecResult r = w->wait();
    CHECK(r.timed_out == timeout);
    CHECK(r.killed == !timeout);
    CHECK(all_gone(daemon));
    CHECK(all_gone(top));
  }
}

TEST_CASE_FIXTURE(Escape, "escape: exit codes, signals and spawn errors pass through the init") {
  CHECK(ww("exit 7").exit_code == 7);
  ExecResult r = ww("kill -KILL $$");
  CHECK(r.signal == SIGKILL);
  CHECK(r.exit_code == 128 + SIGKILL);
  auto w = std::make_shared<Waiter>();
  SpawnRequest req = request(SandboxMode::workspace_write, "");
  req.argv = {"./no-such-program"};
  loop.spawn(std::move(req), w);
  CHECK(w->wait().spawn_error == "failed to run `./no-such-program`: No such file or directory");
  // A script without a shebang runs through /bin/sh, as execvp does.
  spit(ws + "/script", "echo from-script\n");
  ::chmod((ws + "/script").c_str(), 0755);
  auto w2 = std::make_shared<Waiter>();
  req = request(SandboxMode::workspace_write, "");
  req.argv = {"./script"};
  loop.spawn(std::move(req), w2);
  ExecResult s = w2->wait();
  CHECK(s.spawn_error == "");
  CHECK(s.stdout_text == "from-script\n");
}

// ---------------------------------------------------------------------------------- unprivileged

TEST_CASE_FIXTURE(Escape, "escape: the same attacks fail for an unprivileged server") {
  if (::geteuid() != 0) return;  // needs to become nobody
  // A workspace nobody owns, next to an outside file it owns too (so only the sandbox stops it).
  const std::string nws = base + "/nobody-ws", nout = base + "/nobody-out";
  fs::create_directories(nws + "/.git");
  fs::create_directories(nout);
  spit(nws + "/.git/config", "[core]\n");
  spit(nout + "/file", "orig\n");
  for (const auto& p : {nws, nws + "/.git", nws + "/.git/config", nout, nout + "/file"})
    REQUIRE(::chown(p.c_str(), 65534, 65534) == 0);
  const std::string daemon = unique_sleep_token();
  // The fixture's process loop must be parked in its wait before the fork: a thread caught inside
  // the allocator leaves its lock held in the child (ASan's allocator is not fork-safe), and the
  // child's own loop then hangs on its first allocation (seen twice under ASan, stacks in hand).
  REQUIRE(ww("true").exit_code == 0);
  int verdict = as_nobody([&]() -> int {
    if (probe().namespaces.mode != ns::Mode::user) return 1;
    ProcessLoop nloop;
    auto run = [&](const std::string& script) {
      SpawnRequest r;
      r.argv = {"/bin/sh", "-c", script};
      r.cwd = nws;
      r.env = {{"PATH", "/usr/bin:/bin"}};
      SandboxPolicy policy;
      policy.mode = SandboxMode::workspace_write;
      policy.exclude_tmpdir_env_var = true;
      r.sandbox = policy;
      r.sandbox_options.llmx_home = home;
      auto w = std::make_shared<Waiter>();
      nloop.spawn(std::move(r), w);
      return w->wait();
    };
    if (run("echo ok > new && cat new").stdout_text != "ok\n") return 2;
    if (!has(run("echo x > " + nout + "/file").aggregated, kReadOnlyFs)) return 3;
    if (!has(run("chmod 777 " + nout + "/file").aggregated, kReadOnlyFs)) return 4;
    if (!has(run("echo x > .git/config").aggregated, kReadOnlyFs)) return 5;
    if (run("grep CapEff /proc/self/status").stdout_text != "CapEff:\t0000000000000000\n") return 6;
    if (run("hostname llmx-pwned").exit_code == 0) return 7;
    if (!has(run("cat /proc/" + std::to_string(::getppid()) + "/environ").aggregated, "No such file"))
      return 8;
    if (run("setsid sleep " + daemon + " & sleep 0.2").exit_code != 0) return 9;
    if (!all_gone(daemon)) return 10;
    if (run("cat " + home + "/auth.json").stdout_text != "") return 11;
    return 0;
  });
  CHECK(verdict == 0);
  CHECK(slurp(nout + "/file") == "orig\n");
  CHECK((fs::status(nout + "/file").permissions() & fs::perms::all) != fs::perms::all);
  CHECK(slurp(nws + "/.git/config") == "[core]\n");
  CHECK(slurp(nws + "/new") == "ok\n");
}

TEST_CASE_FIXTURE(Escape, "escape: an $LLMX_HOME inside a writable root stays read-only and hides its key") {
  const std::string inner = ws + "/.llmx";
  fs::create_directories(inner);
  spit(inner + "/config.toml", "approval_policy = \"untrusted\"\n");
  spit(inner + "/auth.json", "{\"OPENAI_API_KEY\":\"sk-inner\"}\n");
  SandboxOptions o;
  o.llmx_home = inner;
  EXPECT_DENIED(ww("echo 'approval_policy = \"never\"' > .llmx/config.toml", o), kReadOnlyFs);
  EXPECT_DENIED(ww("rm -f .llmx/auth.json", o), kReadOnlyFs);
  ExecResult r = ww("cat .llmx/auth.json && echo ok > elsewhere && cat elsewhere", o);
  CHECK(r.stdout_text == "ok\n");
  CHECK(slurp(inner + "/config.toml") == "approval_policy = \"untrusted\"\n");
  CHECK(slurp(inner + "/auth.json") == "{\"OPENAI_API_KEY\":\"sk-inner\"}\n");
}

TEST_CASE_FIXTURE(Escape, "escape: without namespaces a cgroup of its own still ends every descendant") {
  if (probe().cgroup.parent.empty()) {
    MESSAGE("no writable cgroup2 hierarchy here: " << probe().cgroup.detail);
    return;
  }
  SandboxOptions o;
  o.isolation = Isolation::landlock_only;
  for (bool kill : {false, true}) {
    CAPTURE(kill);
    const std::string daemon = unique_sleep_token(), top = unique_sleep_token();
    auto w = std::make_shared<Waiter>();
    uint64_t id = loop.spawn(request(SandboxMode::workspace_write,
                                     "setsid sleep " + daemon + " & " + await_sleeps({daemon}) +
                                         "echo started; " +
                                         (kill ? "exec sleep " + top : std::string("sleep 0.4")),
                                     o),
                             w);
    REQUIRE(w->wait_output("started"));
    CHECK(processes_with(daemon) == 1);  // it escaped the process group: only the cgroup holds it
    if (kill) loop.kill(id);
    ExecResult r = w->wait();
    CHECK(r.sandboxed);
    CHECK(all_gone(daemon));
    CHECK(all_gone(top));
  }
}

TEST_CASE("sandbox: an approved fallback still applies every layer it has, without counting as sandboxed") {
  ProcessLoop loop;
  SandboxPolicy policy;  // read-only
  SpawnRequest r;
  r.argv = {"/bin/sh", "-c", "echo x > /tmp/llmx-fallback-probe-$$; grep CapEff /proc/self/status"};
  r.cwd = "/";
  r.env = {{"PATH", "/usr/bin:/bin"}};
  r.sandbox = policy;
  r.sandbox_options.isolation = Isolation::landlock_only;
  r.sandbox_options.fallback = SandboxFallback::unsandboxed_with_approval;
  auto w = std::make_shared<Waiter>();
  loop.spawn(std::move(r), w);
  ExecResult res = w->wait();
  CHECK(res.spawn_error == "");
  CHECK(has(res.stderr_text, "Permission denied"));  // Landlock
  CHECK(res.stdout_text == "CapEff:\t0000000000000000\n");
}
