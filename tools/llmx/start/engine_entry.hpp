// Between the llmx binary and the engine it loads (llmx-engine.so): the binary answers a stdio
// server's `initialize` before the engine, CAF and their libraries are loaded, then hands over
// its command line, the secrets it sealed and what it read from stdin. A C interface: the two
// are linked separately, each with its own copy of the protocol code.
#pragma once

#include <cstddef>

extern "C" {

// What the binary read from stdin for a stdio server, as first_line.hpp's FirstLine.
struct llmx_first_line {
  int front;  // llmx::cli::Front
  const char* answered;
  size_t answered_size;
  const char* rest;
  size_t rest_size;
};

// What the binary did before it loaded the engine.
struct llmx_start {
  // The secrets it took out of the environment (protocol/base/secret_env.hpp), "NAME=VALUE" each;
  // a null pointer ends the list.
  const char* const* sealed_env;
  const llmx_first_line* first_line;  // null when the binary read nothing from stdin
};

// The llmx command line, run by the engine. Returns the exit code.
int llmx_engine_main(int argc, char** argv, const llmx_start* start);

}
