// Unit tests for the sandbox building blocks: availability probe, the seccomp program, Landlock
// rights per ABI, writable roots and sandbox-denial detection (engine.md §6.4, §6.6).
#include "sandbox/sandbox_policy.hpp"

#include <doctest/doctest.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "sandbox/landlock.hpp"
#include "sandbox/process.hpp"
#include "sandbox/seccomp_filter.hpp"

using namespace llmx;
using namespace llmx::sandbox;

TEST_CASE("sandbox: probe reports every layer with a summary") {
  Support s = probe();
  CHECK(s.landlock_abi == landlock::abi_version());
  for (const char* layer : {"namespaces: ", "pid 1: ", "capabilities: ", "landlock: ", "seccomp: "})
    CHECK(s.summary.find(layer) != std::string::npos);
  MESSAGE("sandbox support:\n" << s.summary);
  // This machine (Linux 6.18) offers both; the escape suite relies on it.
  CHECK(s.landlock_abi >= 6);
  CHECK(s.seccomp);
  CHECK(s.init);
  CHECK(s.namespaces.mode == (::geteuid() == 0 ? ns::Mode::privileged : ns::Mode::user));
  CHECK(s.namespaces.fresh_proc);
  CHECK(s.complete());
  // Cached: same answer, no second probe.
  CHECK(probe().summary == s.summary);
}

TEST_CASE("sandbox: the seccomp network filter is built once as BPF") {
  std::string error;
  const sock_fprog* prog = seccomp::network_filter(&error);
  REQUIRE(prog != nullptr);
  CHECK(error.empty());
  CHECK(prog->len > 20);  // arch check + 17 denied syscalls + socket/socketpair argument checks
  CHECK(prog == seccomp::network_filter());
  // The last instruction returns a SECCOMP_RET_* action; the filter never allows by accident
  // for foreign ABIs: some instruction returns KILL (bad arch) and some ERRNO(EPERM).
  bool has_kill = false, has_eperm = false;
  for (unsigned i = 0; i < prog->len; ++i) {
    const sock_filter& f = prog->filter[i];
    if (f.code != (BPF_RET | BPF_K)) continue;
    if ((f.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_KILL_THREAD ||
        (f.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_KILL_PROCESS)
      has_kill = true;
    if (f.k == (SECCOMP_RET_ERRNO | EPERM)) has_eperm = true;
  }
  CHECK(has_kill);
  CHECK(has_eperm);
}

TEST_CASE("sandbox: Landlock handled rights grow with the ABI") {
  CHECK(landlock::handled_fs_rights(0) == 0);
  CHECK(landlock::handled_fs_rights(1) == 0x1fff);
  CHECK(landlock::handled_fs_rights(2) == 0x3fff);
  CHECK(landlock::handled_fs_rights(3) == 0x7fff);
  CHECK(landlock::handled_fs_rights(4) == 0x7fff);
  CHECK(landlock::handled_fs_rights(5) == 0xffff);
  CHECK(landlock::handled_fs_rights(7) == 0xffff);
}

TEST_CASE("sandbox: a ruleset builds for every ABI up to the kernel's") {
  for (int abi = 1; abi <= landlock::abi_version(); ++abi) {
    CAPTURE(abi);
    std::string error;
    landlock::RulesetSpec spec;
    spec.writable_roots = {{"/tmp", false}, {"/does/not/exist", false}};
    spec.restrict_network = true;
    UniqueFd fd = landlock::build_ruleset(spec, abi, &error);
    CHECK(bool(fd));
    CHECK(error.empty());
  }
}

TEST_CASE("sandbox: writable roots follow the reference order and flags") {
  SandboxPolicy p;
  p.mode = SandboxMode::read_only;
  CHECK(writable_roots(p, "/w").empty());
  p.mode = SandboxMode::danger_full_access;
  CHECK(writable_roots(p, "/w").empty());

  p.mode = SandboxMode::workspace_write;
  p.writable_roots = {"/extra", "/w"};
  ::setenv("TMPDIR", "/var/tmp/llmx-x", 1);
  CHECK(writable_roots(p, "/w") ==
        std::vector<std::string>{"/extra", "/w", "/tmp", "/var/tmp/llmx-x"});
  p.exclude_slash_tmp = true;
  CHECK(writable_roots(p, "/w") == std::vector<std::string>{"/extra", "/w", "/var/tmp/llmx-x"});
  p.exclude_tmpdir_env_var = true;
  CHECK(writable_roots(p, "/w") == std::vector<std::string>{"/extra", "/w"});
  ::setenv("TMPDIR", "", 1);
  p.exclude_tmpdir_env_var = false;
  CHECK(writable_roots(p, "/w") == std::vector<std::string>{"/extra", "/w"});
  ::unsetenv("TMPDIR");
}

TEST_CASE("sandbox: danger-full-access prepares nothing") {
  SandboxPolicy p;
  p.mode = SandboxMode::danger_full_access;
  PreparedSandbox s;
  std::string error;
  CHECK(s.prepare(p, "/tmp", {}, &error));
  CHECK_FALSE(s.active());
  CHECK(s.enforced());
}

TEST_CASE("sandbox: read-only and workspace-write prepare Landlock (and seccomp without network)") {
  for (auto mode : {SandboxMode::read_only, SandboxMode::workspace_write}) {
    SandboxPolicy p;
    p.mode = mode;
    PreparedSandbox s;
    std::string error;
    CHECK(s.prepare(p, "/tmp", {}, &error));
    CHECK(error.empty());
    CHECK(s.active());
    CHECK(s.enforced());
  }
}

namespace {

ExecResult failed(int code, std::string out = "", std::string err = "") {
  ExecResult r;
  r.exit_code = code;
  r.stdout_text = out;
  r.stderr_text = err;
  r.aggregated = out + err;
  return r;
}

// The cases keep their outputs in an ExecResult; the check reads views of them.
bool denial(const ExecResult& r, bool sandboxed) {
  return is_sandbox_denial(
      DenialFacts{r.exit_code, r.timed_out, r.stdout_text, r.stderr_text, r.aggregated, r.spawn_error}, sandboxed);
}

}  // namespace

TEST_CASE("sandbox: denial detection follows §6.6") {
  // Keywords anywhere, case-insensitive.
  CHECK(denial(failed(1, "", "touch: cannot touch 'x': Permission denied"), true));
  CHECK(denial(failed(1, "Operation NOT permitted"), true));
  CHECK(denial(failed(2, "", "sh: 1: cannot create /x: Read-only file system"), true));
  CHECK(denial(failed(1, "", "seccomp"), true));
  CHECK(denial(failed(1, "", "Landlock refused"), true));
  CHECK(denial(failed(1, "", "failed to write file"), true));
  CHECK(denial(failed(1, "the SANDBOX said no"), true));
  // No keyword: 2, 126, 127 are ordinary failures.
  CHECK_FALSE(denial(failed(2), true));
  CHECK_FALSE(denial(failed(126), true));
  CHECK_FALSE(denial(failed(127), true));
  CHECK_FALSE(denial(failed(1, "boom"), true));
  // SIGSYS death as reported by a shell.
  CHECK(denial(failed(128 + SIGSYS), true));
  // Success, unsandboxed runs and timeouts are never denials.
  CHECK_FALSE(denial(failed(0, "permission denied"), true));
  CHECK_FALSE(denial(failed(1, "permission denied"), false));
  ExecResult t = failed(124, "permission denied");
  t.timed_out = true;
  CHECK_FALSE(denial(t, true));
  // A sandbox setup failure is a spawn error mentioning the sandbox.
  ExecResult s = failed(-1);
  s.spawn_error =
      "failed to run `ls`: sandbox setup failed (landlock_restrict_self): Invalid argument";
  CHECK(denial(s, true));
  s.spawn_error = "failed to run `nope`: No such file or directory";
  CHECK_FALSE(denial(s, true));
}
