// A test case that hangs must fail by name, not as a silent ctest timeout of the whole binary:
// the watchdog names the case that ran past LLMX_TEST_CASE_TIMEOUT seconds (default 300), shows
// the processes it left running and their threads' stacks (gdb, where present), then ends the run.
#pragma once

#include <string>

namespace llmx::test {

// Starts the watchdog thread (once); test_case_started/ended are called by doctest's listener.
void start_case_watchdog();
void case_watchdog_started(const std::string& name);
void case_watchdog_ended();

}  // namespace llmx::test
