// Every test process runs with HOME pointing at a fresh, empty folder, so no command a test runs
// (a `bash -lc` of the model, git, npm) ever reads the machine user's login profile or writes
// into the real home. We once saw a killed `bash -lc` leave the profile's lock behind in the real
// home, failing every later command-running test on that machine.
#pragma once

#include <stdlib.h>

#include <string>

#include "test/support/temp_dir.hpp"

namespace llmx::test {

class ScratchHome {
 public:
  ScratchHome() {
    ::setenv("HOME", dir_.path().c_str(), 1);
    for (const char* var : {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "BASH_ENV", "ENV"})
      ::unsetenv(var);
  }
  const std::string& path() const { return dir_.path(); }

 private:
  TempDir dir_{"llmx_test_home"};
};

}  // namespace llmx::test
