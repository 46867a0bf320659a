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

namespace llmx::config_test {

namespace fs = std::filesystem;

// Sets (or unsets) an environment variable for the lifetime of the guard.
class EnvGuard {
 public:
  EnvGuard(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh LLMX_HOME with an optional config.toml; the provider environment is cleared.
class TempHome {
 public:
  explicit TempHome(std::optional<std::string> toml = std::nullopt) {
    std::string tmpl = (fs::temp_directory_path() / "llmx-config-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    dir_ = tmpl;
    home_.emplace("LLMX_HOME", dir_.string());
    if (toml) write(*toml);
  }
  ~TempHome() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& toml) {
    std::ofstream f(file());
    f << toml;
  }
  std::string file() const { return (dir_ / "config.toml").string(); }

 private:
  fs::path dir_;
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
