#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

#include "test/support/case_watchdog.hpp"
#include "test/support/scratch_home.hpp"

namespace {

// Counts the test cases that ran: a ctest entry whose filter matches nothing (a name CMake
// split at a `;`, a renamed case) must fail, not pass with zero cases. It also tells the
// watchdog which case runs, so a hang fails by name.
int cases_run = 0;

struct CaseCounter : doctest::IReporter {
  explicit CaseCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    ++cases_run;
    llmx::test::case_watchdog_started(data.m_name);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override { llmx::test::case_watchdog_ended(); }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("case_counter", 1, CaseCounter);

}  // namespace

int main(int argc, char** argv) {
  llmx::test::ScratchHome home;  // before any test: every child inherits it
  llmx::test::start_case_watchdog();
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --list-test-cases and the like
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    filtered |= a.starts_with("-tc=") || a.starts_with("--test-case=");
  }
  if (rc == 0 && filtered && cases_run == 0) {
    std::fprintf(stderr, "no test case matched the filter: nothing was tested\n");
    return 1;
  }
  return rc;
}
