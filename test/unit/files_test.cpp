// The one whole-file reader and the settings cache (protocol/base/files.hpp), and config
// derivation through it: a request pays a stat() while config.toml stays the same, and sees a
// change at once.
#include "protocol/base/files.hpp"

#include <doctest/doctest.h>

#include <fstream>

#include "protocol/config/config.hpp"
#include "test/support/unit_temp_dir.hpp"
#include "test/unit/config_test_env.hpp"

using namespace llmx;
using llmx::test::ScratchDir;

TEST_CASE("files: read gives the whole file, nullopt and errno for what cannot be read") {
  ScratchDir dir;
  std::string big(200000, 'x');
  big += "end";
  dir.write("big", big);
  CHECK(files::read(dir.at("big")) == big);
  int err = 0;
  CHECK_FALSE(files::read(dir.at("missing"), &err));
  CHECK(err == ENOENT);
  CHECK_FALSE(files::read(dir.path(), &err));  // a directory
  CHECK(err == EISDIR);
}

TEST_CASE("files: the cache re-reads a file only when it changed, and derived values follow") {
  ScratchDir dir;
  files::Cache cache;
  auto path = dir.at("settings");
  CHECK(cache.read(path) == nullptr);  // missing
  dir.write("settings", "one");
  auto first = cache.read(path);
  REQUIRE(first);
  CHECK(*first == "one");
  auto reads = cache.reads();
  CHECK(cache.read(path) == first);  // the same shared text: not read again
  CHECK(cache.reads() == reads);

  int made = 0;
  auto length = [&](const files::Cache::Text& t) {
    ++made;
    return t ? t->size() : size_t{0};
  };
  CHECK(*cache.derived<size_t>(path, length) == 3);
  CHECK(*cache.derived<size_t>(path, length) == 3);
  CHECK(made == 1);

  dir.write("settings", "three");  // changed: read and derived again
  CHECK(*cache.read(path) == "three");
  CHECK(*cache.derived<size_t>(path, length) == 5);
  CHECK(made == 2);

  std::filesystem::remove(path);
  CHECK(cache.read(path) == nullptr);
  CHECK(*cache.derived<size_t>(path, length) == 0);
}

TEST_CASE("config: config.toml is parsed once while it stays the same, and a change is seen at once") {
  config_test::TempHome home("model = \"first\"\n");
  auto& cache = files::settings_cache();
  CHECK(load_config({}).model == "first");
  auto reads = cache.reads();
  for (int i = 0; i < 5; ++i) CHECK(load_config({}).model == "first");
  CHECK(cache.reads() == reads);  // only stat()s
  home.write("model = \"second, and longer\"\n");
  CHECK(load_config({}).model == "second, and longer");
  CHECK(cache.reads() > reads);
  // A parse error is reported every time, never cached as a good config.
  home.write("model = \n");
  CHECK_THROWS_AS(load_config({}), ConfigError);
  CHECK_THROWS_AS(load_config({}), ConfigError);
}
