// The stdio transport actors: a detached reader that splits stdin into bounded lines for a session,
// and the single writer of stdout, which batches lines and writes once per mailbox drain.
#pragma once

#include <string>

#include "actors/actors.hpp"
#include "protocol/base/line_cutter.hpp"

namespace llmx {

// Output queued for a client that stops reading stdout, at most (LLMX_MAX_OUTPUT_BYTES
// overrides it); past it the writer closes stdout and drops further output.
inline constexpr uint64_t kDefaultMaxOutputBytes = 256u << 20;
uint64_t max_output_bytes();

// Output queued for a slow client past which the model streams that feed it pause, until it has
// read three quarters of it (LLMX_OUTPUT_PAUSE_BYTES overrides it). What cannot be paused
// (command output, many conversations' last bytes) still meets the cap above.
inline constexpr uint64_t kDefaultPauseOutputBytes = 16u << 20;
uint64_t pause_output_bytes();

// Reads `fd` until EOF on its own thread; sends line / oversize / eof messages to `session`.
// `already_read`: bytes taken from `fd` before (files::read_first_line), cut into lines first.
void spawn_stdio_reader(caf::actor_system& sys, session_actor session, int fd = 0, std::string already_read = {});

// The writer of `fd` (stdout by default). A pipe or socket is written without blocking from the
// worker threads (a room watch waits for a full one); a file or terminal, whose writes block, gets
// a thread of its own.
line_writer_actor spawn_line_writer(caf::actor_system& sys, int fd = 1);

}  // namespace llmx
