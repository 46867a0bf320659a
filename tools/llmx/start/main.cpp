// The llmx binary. It does what must come first in the process (hardening, <home>/.env, sealing
// the secrets), answers a stdio server's `initialize` when the command line is one it can read,
// and then loads the engine
// (llmx-engine.so: every command, the actors, CAF) and runs the command line there. Loading CAF
// is most of the time a client waits for `initialize` (README, "Cold start"), so this binary
// links no CAF: tools/llmx/start is plain code over the protocol layers.
#include <dlfcn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "early_command.hpp"
#include "engine_entry.hpp"
#include "first_line.hpp"
#include "heap_policy.hpp"
#include "leak_check.hpp"
#include "protocol/base/runtime_library.hpp"
#include "protocol/base/secret_env.hpp"
#include "protocol/config/config.hpp"

namespace {

// Process hardening (engine.md §6.7): no core dumps and no ptrace/proc access to our memory or
// environment from the commands we run, and no LD_* injection into anything we start.
void harden_process() {
  if (prctl(PR_SET_DUMPABLE, 0) != 0) std::exit(5);
  struct rlimit none {0, 0};
  if (setrlimit(RLIMIT_CORE, &none) != 0) std::exit(7);
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (kv.starts_with("LD_")) names.emplace_back(kv.substr(0, kv.find('=')));
  }
  for (const auto& n : names) unsetenv(n.c_str());
}

// The engine would refuse to start this server (a broken config.toml, cluster nodes to check):
// then it must say so before anything is read, so the binary leaves the first line to it.
bool engine_would_start(const llmx::cli::EarlyCommand& cmd) {
  try {
    return llmx::load_config(cmd.overrides).cluster.nodes.empty();
  } catch (const std::exception&) {
    return false;
  }
}

// A signal while waiting for the client's first line ends the process: nothing runs yet.
void exit_on_termination(bool on) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, on ? +[](int) { ::_exit(0); } : SIG_DFL);
}

decltype(&llmx_engine_main) load_engine() {
  try {
    // Lazily bound: the functions a command never calls are never looked up.
    return reinterpret_cast<decltype(&llmx_engine_main)>(
        llmx::llmx_module_entry("llmx-engine.so", "llmx_engine_main", "llmx's engine", RTLD_LAZY));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return nullptr;
  }
}

}  // namespace

int main(int argc, char** argv) {
  llmx::cli::settle_threads_before_leak_check();
  // `llmx-mcp-server` (the seed's binary name, installed as a link to llmx) is `llmx mcp-server`.
  std::vector<char*> args(argv, argv + argc);
  if (std::string_view(argv[0]).ends_with("/llmx-mcp-server") || std::string_view(argv[0]) == "llmx-mcp-server") {
    static char subcommand[] = "mcp-server";
    args.insert(args.begin() + 1, subcommand);
  }
  args.push_back(nullptr);
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  if (!std::getenv("LLMX_NO_HARDENING")) harden_process();
  llmx::cli::hold_mmap_threshold(std::getenv("GLIBC_TUNABLES"));
  // <home>/.env before any thread starts (engine.md §4.1; LLMX_* keys are never taken from it).
  try {
    llmx::load_dotenv(llmx::llmx_home());
  } catch (const std::exception&) {
    // A bad LLMX_HOME is reported by the command that needs it, with its own message.
  }
  // Keys and tokens leave the environment (and the bytes /proc/<pid>/environ shows) before a
  // client hears from us or any thread starts; the engine reads them from memory.
  llmx::seal_secret_env();
  std::vector<std::string> sealed;
  for (const auto& [name, value] : llmx::sealed_env()) sealed.push_back(name + "=" + value);
  std::vector<const char*> sealed_list;
  for (const auto& kv : sealed) sealed_list.push_back(kv.c_str());
  sealed_list.push_back(nullptr);

  std::optional<llmx::cli::FirstLine> first;
  std::optional<llmx::cli::EarlyCommand> cmd = llmx::cli::early_command(argc, argv);
  if (cmd && engine_would_start(*cmd)) {
    std::signal(SIGPIPE, SIG_IGN);  // a client already gone must not kill us: the writer finds out
    exit_on_termination(true);
    first = llmx::cli::answer_first_line(cmd->front);
    exit_on_termination(false);
  }
  auto engine = load_engine();
  if (!engine) return 1;
  llmx_first_line read{};
  if (first)
    read = {static_cast<int>(cmd->front), first->answered.data(), first->answered.size(), first->rest.data(),
            first->rest.size()};
  const llmx_start start{sealed_list.data(), first ? &read : nullptr};
  return engine(argc, argv, &start);
}
