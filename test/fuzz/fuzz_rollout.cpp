// A rollout file's contents through the loader that resumes a thread (protocol/store/rollout.hpp):
// rollout::load, rollout::lines_to_fork, rollout::decode_line on every line for_each_line gives,
// and the v2 turn list thread/read rebuilds from the same text (v2::history_of). Garbage is
// documented as skipped, so nothing is caught. Lines are written by encode_line and read by
// decode_line: whatever decoded must encode to a line that decodes again, to the same line (one
// round trip may normalise; a second changes nothing).
#include <string>

#include "fuzz_input.hpp"
#include "protocol/rpc/v2_history.hpp"
#include "protocol/store/rollout.hpp"

using namespace llmx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto contents = fuzz::text_of(data, size);
  auto loaded = rollout::load(contents);
  // A rollback of a few turns on what was loaded (thread/rollback runs on this history).
  rollout::drop_last_turns(loaded.history, loaded.turn_starts, size % 4);
  rollout::lines_to_fork(contents);
  v2::history_of(contents);
  rollout::for_each_line(contents, [](std::string_view line, bool) {
    auto decoded = rollout::decode_line(line);
    if (!decoded) return;
    auto once = rollout::encode_line(*decoded);
    auto again = rollout::decode_line(once);
    fuzz::require(again.has_value(), "an encoded rollout line decodes");
    fuzz::require(rollout::encode_line(*again) == once, "encode(decode(encoded line)) is the same line");
  });
  return 0;
}
