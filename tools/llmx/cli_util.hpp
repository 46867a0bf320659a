// Small helpers shared by the llmx subcommands that run from CLI11 callbacks.
#pragma once

#include <cstdio>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace llmx::cli {

// Prints `error: <message>` on stderr; returns the exit code 1.
inline int fail(std::string_view message) {
  fmt::print(stderr, "error: {}\n", message);
  return 1;
}

// Runs a command from a CLI11 callback: a non-zero exit code (or an exception, reported on
// stderr) becomes CLI::RuntimeError, which CLI11_PARSE returns as the exit code.
template <class F>
void run_from_callback(F&& f) {
  int rc = 0;
  try {
    rc = f();
  } catch (const std::exception& err) {
    rc = fail(err.what());
  }
  std::fflush(stdout);
  if (rc != 0) throw CLI::RuntimeError(rc);
}

}  // namespace llmx::cli
