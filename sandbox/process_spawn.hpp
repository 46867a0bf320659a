// Starting one child: clone(CLONE_VM | CLONE_VFORK) + exec, like posix_spawn, so a large
// multithreaded server pays no page-table copy. Everything the child reads is prepared before,
// and the child itself makes syscalls only (no malloc, no locks).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/process.hpp"
#include "sandbox/process_fd.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx::sandbox {

struct ChildProcess {
  pid_t pid = -1;     // also the process group id
  UniqueFd pidfd;     // readable once the child has exited
  UniqueFd out, err;  // non-blocking read ends of stdout and stderr
  UniqueFd in;        // non-blocking write end of stdin (SpawnRequest::stdin_pipe), else empty
  // llmx-sandbox-init's report (non-blocking read end; empty without an init): the command's
  // real wait status, or the errno of its failed exec.
  UniqueFd report;
};

// argv[0] resolved like execvp() on `env`'s PATH (default "/bin:/usr/bin"); relative PATH
// entries are relative to `cwd`. Names with a slash are returned unchanged. Returns "" and sets
// *err (ENOENT or EACCES) when nothing executable is found.
std::string resolve_program(const std::string& name, const std::map<std::string, std::string>& env,
                            const std::string& cwd, int* err);

class PreparedSpawn {
 public:
  // Resolves the program, builds argv/envp and prepares the sandbox. Returns false with the
  // spawn error text ("failed to run `x`: ...") in *error.
  bool prepare(const SpawnRequest& request, std::string* error);
  // Creates the pipes and starts the child. The child sets up its process group, PDEATHSIG,
  // stdio, the sandbox and cwd, then execs; a failure in any of those steps (including exec)
  // is reported here through memory shared with the vfork'ed child.
  bool start(ChildProcess& out, std::string* error);
  bool sandboxed() const { return sandbox_.active() && sandbox_.enforced(); }
  std::unique_ptr<cgroup::Group> take_cgroup() { return sandbox_.take_cgroup(); }

 private:
  std::string argv0_, path_, cwd_;
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, sh_argv_, envp_;
  bool use_sandbox_ = false;
  bool stdin_pipe_ = false;
  PreparedSandbox sandbox_;
};

}  // namespace llmx::sandbox
