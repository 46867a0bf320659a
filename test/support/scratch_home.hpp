// Every test process runs with HOME pointing at a fresh, empty folder, so no command a test runs
// (a `bash -lc` of the model, git, npm) ever reads the machine user's login profile or writes
// into the real home. We once saw a killed `bash -lc` leave the profile's lock behind in the real
// home, failing every later command-running test on that machine.
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace llmx::test {

class ScratchHome {
 public:
  ScratchHome() {
    const char* tmp = ::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/llmx_test_home_XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
      ::perror("mkdtemp for the scratch HOME");
      ::abort();
    }
    path_ = tmpl;
    ::setenv("HOME", path_.c_str(), 1);
    for (const char* var : {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "BASH_ENV", "ENV"})
      ::unsetenv(var);
  }
  ~ScratchHome() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchHome(const ScratchHome&) = delete;
  ScratchHome& operator=(const ScratchHome&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace llmx::test
