// Readable, rate-limited MCP progress (protocol/rpc/mcp_progress.hpp).
#include <doctest/doctest.h>

#include "protocol/rpc/mcp_progress.hpp"

using namespace llmx;
using namespace std::chrono_literals;
using mcp::ProgressReporter;

namespace {
ExecCommandBeginEvent begin(std::vector<std::string> argv) {
  ExecCommandBeginEvent b;
  b.call_id = "c";
  b.command = std::move(argv);
  return b;
}
}  // namespace

TEST_CASE("mcp progress: milestones say what the turn does, in words") {
  ProgressReporter r;
  auto t = ProgressReporter::Clock::time_point{};
  CHECK(r.on_event(TaskStartedEvent{}, t) == "working");
  CHECK(r.on_event(begin({"bash", "-lc", "cargo test"}), t) == "running `cargo test`");
  CHECK(r.on_event(begin({"ls", "a b"}), t) == "running `ls 'a b'`");
  ExecCommandEndEvent end;
  end.exit_code = 101;
  CHECK(r.on_event(end, t) == "command failed with exit code 101");
  CHECK(r.on_event(ErrorEvent{"boom\nsecond line"}, t) == "error: boom …");
  CHECK_FALSE(r.on_event(TokenCountEvent{}, t));  // bookkeeping says nothing
  CHECK(r.progress() == 5);
}

TEST_CASE("mcp progress: streamed tokens are counted but sent at most once per interval") {
  ProgressReporter r(250ms);
  auto t = ProgressReporter::Clock::time_point{};
  CHECK(r.on_event(AgentMessageDeltaEvent{"a"}, t) == "answer: 1 tokens");
  for (int i = 0; i < 100; ++i) CHECK_FALSE(r.on_event(AgentMessageDeltaEvent{"a"}, t + 1ms * i));
  CHECK(r.on_event(AgentMessageDeltaEvent{"a"}, t + 300ms) == "answer: 102 tokens");
  CHECK(r.progress() == 2);
  // A milestone is never held back, and the end reports the whole answer.
  CHECK(r.on_event(TaskCompleteEvent{}, t + 301ms) == "done: answer of 102 tokens");
  CHECK(r.progress() == 3);
}

TEST_CASE("mcp progress: a long script is cut to one short line") {
  auto shown = mcp::progress_command({"bash", "-lc", std::string(200, 'x') + "\necho done"});
  CHECK(shown.size() <= 84);
  CHECK(shown.ends_with("…"));
  CHECK(mcp::progress_command({"bash", "-lc", "make\nmake test"}) == "make …");
}
