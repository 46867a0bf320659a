// config.toml through the real loader: llmx::load_config and llmx::config_layers_json
// (protocol/config/config.hpp), which only read `$LLMX_HOME/config.toml`. So the input is written
// there, in a scratch home made once per process under /tmp (never the user's HOME). Input: the
// file, then optionally NUL-separated `-c key=value` overrides. ConfigError is how both report
// bad input; anything else escaping is a finding. The same text then goes through toml_edit as a
// client's config edit (config/value/write) would: the first override is the edit's path=value.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz_input.hpp"
#include "protocol/config/config.hpp"
#include "protocol/config/toml_edit.hpp"

using namespace llmx;

namespace {

struct ScratchHome {
  std::string dir;
  ScratchHome() {
    char tmpl[] = "/tmp/llmx-fuzz-config-XXXXXX";
    fuzz::require(::mkdtemp(tmpl) != nullptr, "mkdtemp works");
    dir = tmpl;
    ::setenv("LLMX_HOME", dir.c_str(), 1);
    ::setenv("HOME", dir.c_str(), 1);  // whatever else looks at ~ stays in here too
  }
  ~ScratchHome() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// The loader caches config.toml by its stat() stamp; rewrites within one clock tick could keep
// size and mtime, so each input gets an mtime of its own and is always read afresh.
void write_config(const std::string& path, std::string_view text) {
  static int64_t version = 0;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  fuzz::require(fd >= 0, "the scratch config.toml can be written");
  for (size_t done = 0; done < text.size();) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    fuzz::require(n > 0, "the scratch config.toml can be written");
    done += static_cast<size_t>(n);
  }
  ++version;
  timespec times[2] = {{version, 0}, {version, 0}};
  ::futimens(fd, times);
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ScratchHome home;
  auto parts = fuzz::split(fuzz::text_of(data, size), std::string_view("\0", 1));
  write_config(home.dir + "/config.toml", parts[0]);
  ConfigOverrides o;
  o.cwd = home.dir;
  for (size_t i = 1; i < parts.size() && i <= 8; ++i) o.cli_overrides.emplace_back(parts[i]);
  try {
    load_config(o);
  } catch (const ConfigError&) {
  }
  try {
    config_layers_json(o);
  } catch (const ConfigError&) {
  }
  std::string_view path = "model", value = "\"x\"";
  if (parts.size() > 1)
    if (auto eq = parts[1].find('='); eq != std::string_view::npos) {
      path = parts[1].substr(0, eq);
      value = parts[1].substr(eq + 1);
    }
  try {
    (void)toml_edit::set_value(parts[0], path, value);
  } catch (const toml_edit::EditError&) {
  }
  try {
    (void)toml_edit::remove_value(parts[0], path);
  } catch (const toml_edit::EditError&) {
  }
  return 0;
}
