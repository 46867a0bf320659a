// The llmx command line, run by the engine module (llmx-engine.so) that the llmx binary loads
// (start/main.cpp): exec, the stdio and network servers, sandbox, node, login, mcp, models.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "actors/session.hpp"
#include "protocol/base/secret_env.hpp"
#include "exec_command.hpp"
#include "login_command.hpp"
#include "mcp_command.hpp"
#include "models_command.hpp"
#include "protocol/config/config.hpp"
#include "protocol/rpc/wire_catalog.hpp"
#include "sandbox_command.hpp"
#include "node_command.hpp"
#include "serve_command.hpp"
#include "start/engine_entry.hpp"

extern "C" __attribute__((visibility("default"))) int llmx_engine_main(int argc, char** argv, const llmx_start* start) {
  // The binary loaded <home>/.env and sealed the secrets before it answered anyone
  // (start/main.cpp); this copy of secret_env gets what it sealed.
  for (auto e = start->sealed_env; e && *e; ++e) {
    std::string_view kv(*e);
    const auto eq = kv.find('=');
    llmx::add_sealed_variable(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  const llmx_first_line* first_line = start->first_line;
  CLI::App app{"llmx: a coding agent engine for any OpenAI-compatible model"};
  app.require_subcommand(1);
  std::vector<std::string> config_overrides;
  app.add_option("-c,--config", config_overrides, "Override a config value: key.path=value (TOML, else a string)")
      ->allow_extra_args(false)->take_all();

  llmx::cli::ExecOptions exec;
  std::string sandbox, approval;
  auto* exec_cmd = app.add_subcommand("exec", "Run one task non-interactively and print the answer");
  exec_cmd->add_option("prompt", exec.prompt, "The task for the agent");
  exec_cmd->add_flag("--json,--experimental-json", exec.json,
                     "Print the event stream the Codex SDK reads: thread/turn/item events, one JSON line each");
  exec_cmd->add_flag("--core-events", exec.core_events, "Print every core event as one JSON line");
  exec_cmd->add_flag("--skip-git-repo-check", exec.skip_git_repo_check, "Run even outside a git repository");
  exec_cmd->add_option("--color", exec.color, "Colours on stderr: auto (when it is a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  // One value per occurrence (repeat the flag), so the prompt after them stays the prompt.
  exec_cmd->add_option("-i,--image", exec.images, "Attach an image file to the prompt (repeatable)")
      ->allow_extra_args(false)->take_all();
  exec_cmd->add_option("--add-dir", exec.add_dirs, "Also writable under workspace-write (repeatable)")
      ->allow_extra_args(false)->take_all();
  exec_cmd->add_option("-o,--output-last-message", exec.output_last_message, "Write the final answer to this file");
  exec_cmd->add_option("--output-schema", exec.output_schema, "The final answer must be JSON of the JSON Schema in this file");
  exec_cmd->add_option("--thread-source", exec.thread_source, "How a new thread is classified in its session_meta (the SDK's threadSource)");
  exec_cmd->add_option("--cyber-access-program", exec.cyber_access_program,
                       "Access program for this turn, sent as access_programs.cyber (Responses wire only)")
      ->check(CLI::IsMember({"standard", "daybreak_blue", "daybreak_red"}));
  auto* resume_cmd = exec_cmd->add_subcommand("resume", "Continue a stored conversation: resume <ID> PROMPT, or --last PROMPT");
  std::vector<std::string> resume_args;
  resume_cmd->fallthrough();  // exec options (--json, -m ...) may follow `resume`
  resume_cmd->add_flag("--last", exec.resume_last, "The most recent stored conversation");
  resume_cmd->add_option("args", resume_args, "[ID] PROMPT");
  // The servers' options: the binary reads them too, to answer `initialize` before it loads us
  // (start/early_command.cpp); an option added here is left to us there until it learns it.
  auto add_common = [&](CLI::App* cmd, llmx::ConfigOverrides& o) {
    cmd->add_option_function<std::string>(
           "-s,--sandbox",
           [&o](const std::string& v) {
             auto mode = llmx::enum_from_name<llmx::SandboxMode>(v);
             if (!mode) throw CLI::ValidationError("--sandbox", "expected read-only, workspace-write or danger-full-access");
             o.sandbox_mode = *mode;
           },
           "Sandbox for model commands: read-only, workspace-write, danger-full-access");
    cmd->add_option_function<std::string>(
           "-a,--ask-for-approval",
           [&o](const std::string& v) {
             auto policy = llmx::enum_from_name<llmx::AskForApproval>(v);
             if (!policy) throw CLI::ValidationError("--ask-for-approval", "expected untrusted, on-failure, on-request or never");
             o.approval_policy = *policy;
           },
           "When to ask before running commands: untrusted, on-failure, on-request, never");
    cmd->add_option("-m,--model", o.model, "Model to use");
    cmd->add_option("-p,--profile", o.profile, "Configuration profile from config.toml");
    cmd->add_option("-C,--cd", o.cwd, "Working directory of the agent");
    cmd->add_option("-c,--config", o.cli_overrides, "Override a config value: key.path=value")->allow_extra_args(false)->take_all();
  };
  add_common(exec_cmd, exec.overrides);

  // A server: the common options, worker nodes, and network clients instead of stdio.
  auto add_server = [&](const char* name, const char* what, llmx::cli::ServeOptions& o, const char* listen) {
    auto* cmd = app.add_subcommand(name, what);
    add_common(cmd, o.overrides);
    cmd->add_option("--nodes", o.nodes, "Place conversations on these worker nodes (HOST:PORT,...)")->delimiter(',');
    cmd->add_option("--listen", o.listen, listen);
    return cmd;
  };
  llmx::cli::ServeOptions serve;
  auto* mcp_cmd = add_server("mcp-server", "Serve MCP over stdio (tools llmx and llmx-reply)", serve,
                             "Serve MCP Streamable HTTP at http://HOST:PORT/mcp (port 0 picks one; off loopback "
                             "LLMX_LISTEN_TOKEN is required) instead of stdio");
  llmx::cli::ServeOptions app_opts;
  auto* app_cmd = add_server("app-server", "Serve the app-server API (v1 conversations, v2 threads) over stdio", app_opts,
                             "Serve WebSocket clients at ws://HOST:PORT (port 0 picks one; off loopback "
                             "LLMX_LISTEN_TOKEN is required) instead of stdio");
  llmx::cli::ServeOptions acp_opts;
  auto* acp_cmd = app.add_subcommand("acp", "Serve the Agent Client Protocol over stdio (for editors: Zed, JetBrains, ...)");
  add_common(acp_cmd, acp_opts.overrides);
  std::string schema_out, ts_out, prettier;
  auto* schema_cmd = app_cmd->add_subcommand("generate-json-schema", "Write the JSON Schema of the app-server protocol");
  schema_cmd->add_option("-o,--out", schema_out, "Output directory")->required();
  auto* ts_cmd = app_cmd->add_subcommand("generate-ts", "Write TypeScript declarations of the app-server protocol");
  ts_cmd->add_option("-o,--out", ts_out, "Output directory")->required();
  ts_cmd->add_option("-p,--prettier", prettier, "Run this prettier binary with --write on the files");

  llmx::cli::SandboxOptions sandbox_opts;
  auto* sandbox_cmd = app.add_subcommand("sandbox", "Run a command under the llmx sandbox, or --check what is supported");
  sandbox_cmd->add_option("--mode", sandbox_opts.mode, "read-only, workspace-write or danger-full-access");
  sandbox_cmd->add_flag("--check", sandbox_opts.check, "Report Landlock/seccomp support and exit");
  sandbox_cmd->add_flag("--network", sandbox_opts.network, "Allow network access (workspace-write)");
  sandbox_cmd->add_option("--writable-root", sandbox_opts.writable_roots, "Extra writable root (workspace-write)");
  sandbox_cmd->add_option("command", sandbox_opts.command, "The command, after --");

  llmx::cli::NodeOptions node_opts;
  auto* node_cmd = app.add_subcommand("node", "Host conversations for fronts (--nodes) over CAF's middleman");
  node_cmd->add_option("--listen", node_opts.listen, "HOST:PORT to listen on (port 0: a free one; loopback by default)");
  node_cmd->add_option("--cert", node_opts.cert, "TLS certificate (PEM), required beyond loopback");
  node_cmd->add_option("--key", node_opts.key, "TLS private key (PEM)");
  node_cmd->add_option("--cafile", node_opts.cafile, "CA certificates that signed the fronts' certificates (PEM)");
  node_cmd->add_flag("--exit-on-stdin-eof", node_opts.exit_on_stdin_eof, "Exit when stdin closes (a supervisor's pipe)");

  std::string patch_cwd = ".";
  auto* patch_cmd = app.add_subcommand("apply-patch", "Apply a patch read from stdin");
  patch_cmd->add_option("-C,--cd", patch_cwd, "Directory the patch paths are relative to");

  llmx::cli::add_login_commands(app);
  llmx::cli::add_mcp_command(app, config_overrides);
  llmx::cli::add_models_command(app, config_overrides);
  // A usage error (unknown flag, missing value) exits 2, as the reference's CLI does.
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command that runs from its callback (login, mcp ...) failed
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (*exec_cmd) {
      if (*resume_cmd) {
        // The prompt may instead come on stdin (as the Codex SDK sends it).
        size_t ids = exec.resume_last ? 0 : 1;
        if (resume_args.size() < ids || resume_args.size() > ids + 1) {
          fmt::print(stderr, "error: usage: llmx exec resume <ID> [PROMPT] | llmx exec resume --last [PROMPT]\n");
          return 2;
        }
        if (!exec.resume_last) exec.resume_id = resume_args[0];
        exec.prompt = resume_args.size() > ids ? resume_args.back() : std::string();
      }
      // No prompt, or `-`: it is read from stdin (so `echo task | llmx exec` works). With no
      // prompt on a terminal nobody is typing one: say so instead of waiting for EOF.
      if (exec.prompt.empty() && ::isatty(STDIN_FILENO)) {
        fmt::print(stderr, "error: a prompt is required: llmx exec PROMPT, or pipe it on stdin (`-` reads it from this "
                           "terminal until Ctrl-D)\n");
        return 2;
      }
      if (exec.prompt.empty() || exec.prompt == "-") {
        if (::isatty(STDIN_FILENO)) fmt::print(stderr, "Reading the prompt from stdin (end it with Ctrl-D)...\n");
        std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        if (text.empty()) {
          fmt::print(stderr, "error: a prompt is required: llmx exec PROMPT, or the prompt on stdin\n");
          return 2;
        }
        exec.prompt = std::move(text);
      }
      exec.overrides.cli_overrides.insert(exec.overrides.cli_overrides.begin(), config_overrides.begin(),
                                          config_overrides.end());
      return llmx::cli::run_exec(exec);
    }
    if (*sandbox_cmd) {
      sandbox_opts.overrides.cli_overrides = config_overrides;
      return llmx::cli::run_sandbox(sandbox_opts);
    }
    if (*patch_cmd) return llmx::cli::run_apply_patch(patch_cwd);
    if (*node_cmd) return llmx::cli::run_node(node_opts);
    if (*schema_cmd) {
      llmx::schema::write_json_schema_bundle(schema_out, llmx::export_client_requests);
      return 0;
    }
    if (*ts_cmd) {
      llmx::schema::write_typescript(ts_out, llmx::export_client_requests);
      if (!prettier.empty()) return llmx::cli::run_prettier(prettier, ts_out);
      return 0;
    }
    // The servers' `-c` overrides come after the global ones (they win).
    auto with_global = [&](llmx::cli::ServeOptions& o) -> const llmx::cli::ServeOptions& {
      o.overrides.cli_overrides.insert(o.overrides.cli_overrides.begin(), config_overrides.begin(),
                                       config_overrides.end());
      return o;
    };
    // What the binary read from stdin goes to the server it read it for.
    if (first_line) {
      llmx::cli::FirstLine got{{first_line->answered, first_line->answered_size}, {first_line->rest, first_line->rest_size}};
      auto front = static_cast<llmx::cli::Front>(first_line->front);
      (front == llmx::cli::Front::app ? app_opts : front == llmx::cli::Front::acp ? acp_opts : serve).first_line =
          std::move(got);
    }
    if (*app_cmd) return llmx::cli::run_app_server(with_global(app_opts));
    if (*acp_cmd) return llmx::cli::run_acp(with_global(acp_opts));
    if (*mcp_cmd) return llmx::cli::run_mcp_server(with_global(serve));
  } catch (const std::exception& err) {
    fmt::print(stderr, "error: {}\n", err.what());
    return 1;
  }
  return 0;
}
