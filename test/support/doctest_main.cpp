#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test/support/scratch_home.hpp"

int main(int argc, char** argv) {
  llmx::test::ScratchHome home;  // before any test: every child inherits it
  doctest::Context context(argc, argv);
  return context.run();
}
