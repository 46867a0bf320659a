#include "login_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_util.hpp"
#include "protocol/config/auth.hpp"
#include "protocol/config/config.hpp"
#include "protocol/base/secret_env.hpp"
#include "protocol/base/text.hpp"

namespace llmx::cli {

namespace {

constexpr std::string_view kPipeHint = "printenv LLMX_API_KEY | llmx login --api-key";

using text::trim;

// All of stdin.
std::string read_stdin() {
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("failed to read the API key from stdin: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}


}  // namespace

int run_login_api_key(const std::string& home) {
  if (::isatty(STDIN_FILENO))
    return fail(fmt::format("--api-key reads the key from stdin; pipe it in, e.g. `{}`", kPipeHint));
  std::string key = trim(read_stdin());
  if (key.empty()) return fail(fmt::format("no API key on stdin; pipe it in, e.g. `{}`", kPipeHint));
  auth::save_api_key(home, key);
  fmt::print("Successfully logged in\n");
  return 0;
}

int run_login_status(const std::string& home) {
  auto st = auth::status(home);
  bool usable = false;
  if (st.api_key) {
    fmt::print("Logged in using an API key - {}\n", auth::mask_key(*st.api_key));
    usable = true;
  }
  if (const char* env = env_value("LLMX_API_KEY"); env && !trim(env).empty()) {
    fmt::print("Using LLMX_API_KEY from the environment - {}\n", auth::mask_key(trim(env)));
    usable = true;
  }
  if (usable) return 0;
  if (st.has_tokens)
    fmt::print("Not logged in (auth.json holds ChatGPT tokens, which llmx does not use; run `{}`)\n", kPipeHint);
  else
    fmt::print("Not logged in\n");
  return 1;
}

int run_logout(const std::string& home) {
  if (auth::logout(home))
    fmt::print("Successfully logged out\n");
  else
    fmt::print("Not logged in\n");
  return 0;
}

void add_login_commands(CLI::App& app) {
  struct LoginState {
    bool api_key = false;
  };
  auto state = std::make_shared<LoginState>();

  auto* login = app.add_subcommand("login", "Store an API key in $LLMX_HOME/auth.json (read from stdin)");
  login->add_flag("--api-key,--with-api-key", state->api_key,
                  fmt::format("Read the API key from stdin, e.g. `{}`", kPipeHint))
      ->disable_flag_override();  // `--api-key=<key>` is refused without echoing the value
  // Extra words are refused below without being echoed: they are most likely a key.
  login->allow_extras();
  auto* status = login->add_subcommand("status", "Show whether an API key is stored or set in the environment");

  status->callback([] { run_from_callback([] { return run_login_status(llmx_home()); }); });
  login->callback([login, status, state] {
    if (status->parsed()) return;
    run_from_callback([&] {
      if (!login->remaining().empty())
        return fail(fmt::format("unexpected arguments to `llmx login` (an API key is never passed as an argument; "
                                "pipe it in: `{}`)",
                                kPipeHint));
      if (!state->api_key)
        return fail(fmt::format("llmx supports API-key login only: `{}`", kPipeHint));
      return run_login_api_key(llmx_home());
    });
  });

  auto* logout = app.add_subcommand("logout", "Remove the API key stored by `llmx login`");
  logout->callback([] { run_from_callback([] { return run_logout(llmx_home()); }); });
}

}  // namespace llmx::cli
