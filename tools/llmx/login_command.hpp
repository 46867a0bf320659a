// `llmx login --api-key` (key read from stdin), `llmx login status` and `llmx logout`: manage the
// API key stored in $LLMX_HOME/auth.json (engine.md §4.8, DECISIONS E7). Keys are never printed
// unmasked.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace llmx::cli {

// Registers `login` (with `--api-key` / `--with-api-key` and the `status` subcommand) and
// `logout` on `app`. They run from their CLI11 callbacks while `app` parses: success lets the
// parse finish normally (main's dispatch finds nothing else to run and returns 0); a failure
// prints to stderr and throws CLI::RuntimeError(1), which CLI11_PARSE turns into exit code 1.
void add_login_commands(CLI::App& app);

// The commands themselves, for tests: each returns the exit code; `home` is the llmx home.
int run_login_api_key(const std::string& home);
int run_login_status(const std::string& home);
int run_logout(const std::string& home);

}  // namespace llmx::cli
