// Shared by the config unit tests: environment guards and a scratch LLMX_HOME.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "protocol/config/config.hpp"
#include "test/support/env_guard.hpp"
#include "test/support/temp_dir.hpp"

namespace llmx::config_test {

namespace fs = std::filesystem;

using llmx::test::EnvGuard;

// A fresh LLMX_HOME with an optional config.toml; the provider environment is cleared.
class TempHome {
 public:
  explicit TempHome(std::optional<std::string> toml = std::nullopt) {
    home_.emplace("LLMX_HOME", dir_.path());
    if (toml) write(*toml);
  }
  void write(const std::string& toml) {
    std::ofstream f(file());
    f << toml;
  }
  std::string file() const { return dir_.file("config.toml"); }

 private:
  llmx::test::TempDir dir_{"llmx-config-test"};
  std::optional<EnvGuard> home_;
  EnvGuard base_url_{"LLMX_BASE_URL", std::nullopt};
  EnvGuard api_key_{"LLMX_API_KEY", std::nullopt};
  EnvGuard oss_url_{"LLMX_OSS_BASE_URL", std::nullopt};
  EnvGuard oss_port_{"LLMX_OSS_PORT", std::nullopt};
};

inline ConfigOverrides with_c(std::vector<std::string> c) {
  ConfigOverrides o;
  o.cli_overrides = std::move(c);
  return o;
}

}  // namespace llmx::config_test
