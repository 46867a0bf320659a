// What a person sees of `llmx exec` (protocol/rpc/exec_human.hpp): commands with exit code,
// duration and the first lines, patches with +/- counts, the plan, intermediate messages (the
// final one is stdout's), tokens at the end, colours only when asked.
#include <doctest/doctest.h>

#include "protocol/rpc/exec_human.hpp"

using namespace llmx;

TEST_CASE("exec human output: commands, patches, plans, messages and tokens") {
  exec_human::Printer p(false);
  auto on = [&](EventMsg m) { return p.on(Event{"0", std::move(m)}); };
  CHECK(on(AgentMessageEvent{"Running it."}).empty());  // not yet known to be intermediate
  auto begin = on(ExecCommandBeginEvent{"c", {"bash", "-lc", "ls"}, "/w", {}, false});
  CHECK(begin == "llmx: Running it.\n$ bash -lc ls  in /w\n");
  ExecCommandEndEvent end;
  end.exit_code = 2;
  end.duration = Duration{1, 500000000};
  end.aggregated_output = "1\n2\n3\n4\n5\n6\n7\n";
  CHECK(on(end) == "  exited 2 in 1.5s\n  1\n  2\n  3\n  4\n  5\n  … 2 more lines\n");
  std::map<std::string, FileChange> changes{{"/w/a.txt", FileAdd{"x\ny\n"}},
                                            {"/w/b.txt", FileUpdate{"@@ -1 +1,2 @@\n-old\n+new\n+more\n", std::nullopt}}};
  CHECK(on(PatchApplyBeginEvent{"p", true, changes}) == "apply_patch\n  A /w/a.txt (+2 -0)\n  M /w/b.txt (+2 -1)\n");
  CHECK(on(PlanUpdateEvent{std::nullopt, {PlanItem{"one", StepStatus::completed}, PlanItem{"two", StepStatus::in_progress}}}) ==
        "plan\n  [x] one\n  [>] two\n");
  CHECK(on(AgentMessageEvent{"All done."}).empty());
  TokenCountEvent tc;
  TokenUsageInfo info;
  info.total_token_usage = TokenUsage{10, 4, 3, 0, 13};
  tc.info = info;
  CHECK(on(tc).empty());
  // The final message is not repeated on stderr: stdout carries it.
  CHECK(on(TaskCompleteEvent{std::string("All done.")}) == "tokens used: 13 (input 10, cached 4, output 3)\n");
}

TEST_CASE("exec human output: the header, and colours only when asked") {
  exec_human::Header h{"0.1.0", "m", "litellm", "/w", "read-only", "never"};
  auto plain = exec_human::Printer(false).header(h, "t-1");
  CHECK(plain == "llmx 0.1.0\nmodel: m\nprovider: litellm\nworkdir: /w\nsandbox: read-only\napproval: never\nthread id: t-1\n--------\n");
  auto colored = exec_human::Printer(true).header(h, "t-1");
  CHECK(colored.find("\x1b[1mllmx 0.1.0\x1b[0m") == 0);
}
