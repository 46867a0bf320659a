#include "sandbox_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "protocol/config/config.hpp"
#include "protocol/core/policy.hpp"
#include "sandbox/apply_patch.hpp"
#include "sandbox/exec_env.hpp"
#include "sandbox/process.hpp"
#include "sandbox/sandbox_policy.hpp"

namespace llmx::cli {

namespace {

// Passes the child's output through as it arrives and hands back its result.
class Passthrough : public sandbox::ProcessHandler {
 public:
  void on_output(sandbox::Stream stream, std::string_view bytes) override {
    int fd = stream == sandbox::Stream::out ? 1 : 2;
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  void on_exit(sandbox::ExecResult r) override { result.set_value(std::move(r)); }
  std::promise<sandbox::ExecResult> result;
};

}  // namespace

int run_sandbox(const SandboxOptions& o) {
  const auto& support = sandbox::probe();
  // sandbox_fallback and $LLMX_HOME come from the configuration; a broken config.toml must not
  // stop a check, so its defaults stand in.
  std::string fallback = "refuse", home;
  try {
    auto cfg = load_config(o.overrides);
    fallback = cfg.sandbox_fallback;
    home = cfg.llmx_home;
  } catch (const std::exception& err) {
    fmt::print(stderr, "warning: {} (using the defaults)\n", err.what());
  }
  if (o.check) {
    fmt::print("{}\n", support.summary);
    if (support.complete()) {
      fmt::print("sandbox: complete (namespaces, capabilities, Landlock and seccomp as listed)\n");
    } else {
      fmt::print("sandbox: incomplete: the kernel refuses namespaces\n");
      fmt::print("fallback: sandbox_fallback = \"{}\": {}\n", fallback,
                 fallback == "refuse" ? "sandboxed commands are refused"
                                      : "commands run only after approval, without the namespace "
                                        "layer (Landlock, seccomp and dropped capabilities where "
                                        "available)");
    }
    return support.complete() ? 0 : 1;
  }
  if (o.command.empty()) {
    fmt::print(stderr, "error: no command given (llmx sandbox [--mode M] -- CMD...)\n");
    return 2;
  }
  auto mode = enum_from_name<SandboxMode>(o.mode);
  if (!mode) {
    fmt::print(stderr, "error: unknown sandbox mode `{}`\n", o.mode);
    return 2;
  }
  SandboxPolicy policy;
  policy.mode = *mode;
  policy.network_access = o.network;
  policy.writable_roots = o.writable_roots;
  std::string cwd = std::filesystem::current_path().string();
  sandbox::SpawnRequest req;
  req.argv = o.command;
  req.cwd = cwd;
  req.sandbox_cwd = cwd;
  req.env = sandbox::build_child_env(sandbox::ShellEnvironmentPolicy{}, sandbox::current_process_env(),
                                     !policy.has_network());
  if (policy.mode != SandboxMode::danger_full_access) req.sandbox = policy;
  req.sandbox_options.llmx_home = home;
  // The person at the terminal asked for this very command: that is the approval the fallback
  // needs.
  if (fallback == "unsandboxed-with-approval")
    req.sandbox_options.fallback = sandbox::SandboxFallback::unsandboxed_with_approval;
  req.max_delta_chunks = SIZE_MAX;
  sandbox::ProcessLoop loop;
  auto handler = std::make_shared<Passthrough>();
  auto future = handler->result.get_future();
  loop.spawn(std::move(req), handler);
  auto r = future.get();
  if (!r.spawn_error.empty()) {
    fmt::print(stderr, "error: {}\n", r.spawn_error);
    return 127;
  }
  return r.exit_code;
}

int run_apply_patch(const std::string& cwd) {
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto r = patch::run_cli(text, cwd);
  std::fwrite(r.stdout_text.data(), 1, r.stdout_text.size(), stdout);
  std::fwrite(r.stderr_text.data(), 1, r.stderr_text.size(), stderr);
  return r.exit_code;
}

}  // namespace llmx::cli
