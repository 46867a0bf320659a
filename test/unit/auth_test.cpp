// Unit tests for the stored API key (engine.md §4.8, DECISIONS E7): auth.json's mode and layout,
// unknown fields kept, errors, logout, masking, and the bearer-token order literal > env_key >
// stored key > error. The stored key must never appear in JSON.
#include "protocol/config/auth.hpp"

#include <doctest/doctest.h>
#include "test/support/env_guard.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>

#include "protocol/config/config.hpp"
#include "protocol/base/json_codec.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using llmx::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

using EnvVar = llmx::test::EnvGuard;

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Every entry of a directory other than auth.json (temporary files left behind).
std::vector<std::string> strays(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "auth.json") out.push_back(e.path().filename().string());
  return out;
}

constexpr const char* kKey = "sk-proj-abcdefghijklmnopqrstuvwxyzABCDE";

}  // namespace

TEST_CASE("auth: save writes a 0600 pretty-printed auth.json and load reads it back") {
  ScratchDir dir("llmx_auth");
  auto old_umask = ::umask(0);  // the mode must not depend on a permissive umask
  auth::save_api_key(dir.path(), "  " + std::string(kKey) + "\n");
  ::umask(old_umask);
  CHECK(mode_of(dir.at("auth.json")) == 0600);
  CHECK(dir.read("auth.json") == std::optional<std::string>("{\n  \"OPENAI_API_KEY\": \"" + std::string(kKey) + "\"\n}\n"));
  CHECK(auth::load_api_key(dir.path()) == std::optional<std::string>(kKey));
  CHECK(strays(dir.path()).empty());

  SUBCASE("an overwrite keeps the mode, even of a file someone loosened, and leaves no temp file") {
    REQUIRE(::chmod(dir.at("auth.json").c_str(), 0644) == 0);
    auth::save_api_key(dir.path(), "sk-second-key-0123456789abcdef");
    CHECK(mode_of(dir.at("auth.json")) == 0600);
    CHECK(auth::load_api_key(dir.path()) == std::optional<std::string>("sk-second-key-0123456789abcdef"));
    CHECK(strays(dir.path()).empty());
  }
}

TEST_CASE("auth: save creates a missing home directory with mode 0700") {
  ScratchDir dir("llmx_auth");
  std::string home = dir.at("nested/home");
  auth::save_api_key(home, kKey);
  CHECK(mode_of(home) == 0700);
  CHECK(mode_of(home + "/auth.json") == 0600);
  CHECK(auth::load_api_key(home) == std::optional<std::string>(kKey));
}

TEST_CASE("auth: rewriting keeps tokens and unknown fields, in order") {
  ScratchDir dir("llmx_auth");
  dir.write("auth.json", R"({"tokens": {"id_token": "a.b.c", "access_token": "x", "refresh_token": "r", "account_id": "acc"},
 "OPENAI_API_KEY": null, "last_refresh": "2025-01-01T00:00:00Z", "future": [1, 2.5, true, null, {}]})");
  auth::save_api_key(dir.path(), kKey);
  auto text = dir.read("auth.json");
  REQUIRE(text);
  CHECK(*text == "{\n"
                 "  \"tokens\": {\n"
                 "    \"id_token\": \"a.b.c\",\n"
                 "    \"access_token\": \"x\",\n"
                 "    \"refresh_token\": \"r\",\n"
                 "    \"account_id\": \"acc\"\n"
                 "  },\n"
                 "  \"OPENAI_API_KEY\": \"" + std::string(kKey) + "\",\n"
                 "  \"last_refresh\": \"2025-01-01T00:00:00Z\",\n"
                 "  \"future\": [\n"
                 "    1,\n"
                 "    2.5,\n"
                 "    true,\n"
                 "    null,\n"
                 "    {}\n"
                 "  ]\n"
                 "}\n");
  auto st = auth::status(dir.path());
  CHECK(st.api_key == std::optional<std::string>(kKey));
  CHECK(st.has_tokens);
  CHECK(st.auth_method() == std::optional<std::string>("apikey"));
}

TEST_CASE("auth: a key added to a file without one goes first") {
  ScratchDir dir("llmx_auth");
  dir.write("auth.json", R"({"last_refresh": "2025-01-01T00:00:00Z"})");
  CHECK_FALSE(auth::load_api_key(dir.path()).has_value());
  auth::save_api_key(dir.path(), kKey);
  CHECK(dir.read("auth.json") ==
        std::optional<std::string>("{\n  \"OPENAI_API_KEY\": \"" + std::string(kKey) +
                                   "\",\n  \"last_refresh\": \"2025-01-01T00:00:00Z\"\n}\n"));
}

TEST_CASE("auth: missing, empty-key and malformed files") {
  ScratchDir dir("llmx_auth");
  CHECK_FALSE(auth::load_api_key(dir.path()).has_value());
  auto st = auth::status(dir.path());
  CHECK_FALSE(st.file_exists);
  CHECK_FALSE(st.auth_method().has_value());

  dir.write("auth.json", R"({"OPENAI_API_KEY": "   "})");
  CHECK_FALSE(auth::load_api_key(dir.path()).has_value());

  dir.write("auth.json", R"({"OPENAI_API_KEY": null, "tokens": {"access_token": "t"}})");
  CHECK(auth::status(dir.path()).auth_method() == std::optional<std::string>("chatgpt"));

  std::string file = dir.at("auth.json");
  dir.write("auth.json", "{not json");
  CHECK_THROWS_WITH_AS(auth::load_api_key(dir.path()), doctest::Contains(file.c_str()), auth::AuthError);
  CHECK_THROWS_WITH_AS(auth::load_api_key(dir.path()), doctest::Contains("not valid JSON"), auth::AuthError);
  // Saving over a malformed file refuses and leaves it alone.
  CHECK_THROWS_AS(auth::save_api_key(dir.path(), kKey), auth::AuthError);
  CHECK(dir.read("auth.json") == std::optional<std::string>("{not json"));

  dir.write("auth.json", "[1]");
  CHECK_THROWS_WITH_AS(auth::load_api_key(dir.path()), doctest::Contains("must hold a JSON object"), auth::AuthError);
  dir.write("auth.json", R"({"OPENAI_API_KEY": 42})");
  CHECK_THROWS_WITH_AS(auth::load_api_key(dir.path()), doctest::Contains("`OPENAI_API_KEY` must be a string or null"),
                       auth::AuthError);
  // An AuthError is a ConfigError, so load_config's callers report it.
  CHECK_THROWS_AS(auth::load_api_key(dir.path()), ConfigError);

  if (::geteuid() != 0) {  // root reads anything
    dir.write("auth.json", R"({"OPENAI_API_KEY": "k"})");
    REQUIRE(::chmod(file.c_str(), 0) == 0);
    CHECK_THROWS_WITH_AS(auth::load_api_key(dir.path()), doctest::Contains(("failed to read " + file).c_str()), auth::AuthError);
  }
}

TEST_CASE("auth: an empty key is refused") {
  ScratchDir dir("llmx_auth");
  CHECK_THROWS_AS(auth::save_api_key(dir.path(), " \n\t"), auth::AuthError);
  CHECK_FALSE(dir.exists("auth.json"));
}

TEST_CASE("auth: logout deletes the file and reports whether there was one") {
  ScratchDir dir("llmx_auth");
  CHECK_FALSE(auth::logout(dir.path()));
  auth::save_api_key(dir.path(), kKey);
  CHECK(auth::logout(dir.path()));
  CHECK_FALSE(dir.exists("auth.json"));
  CHECK_FALSE(auth::load_api_key(dir.path()).has_value());
  CHECK_FALSE(auth::logout(dir.path()));
}

TEST_CASE("auth: mask_key shows 8 + 5 characters of long keys and nothing of short ones") {
  CHECK(auth::mask_key(kKey) == "sk-proj-***ABCDE");
  CHECK(auth::mask_key("sk-0123456789abcdefghij") == "sk-01234***fghij");  // 23 chars: 10 hidden
  CHECK(auth::mask_key("sk-0123456789abcdefgh") == "sk-01234***defgh");    // 21: 8 hidden
  CHECK(auth::mask_key("sk-0123456789abcdefg") == "***");                  // 20: too short
  CHECK(auth::mask_key("short") == "***");
  CHECK(auth::mask_key("") == "***");
}

TEST_CASE("auth: attach_stored_api_key only for providers that may use it") {
  ScratchDir dir("llmx_auth");
  auto providers = builtin_providers();
  SUBCASE("no auth.json: nothing attached") {
    auth::attach_stored_api_key(providers["litellm"], dir.path());
    CHECK_FALSE(providers["litellm"].stored_api_key.has_value());
  }
  SUBCASE("a stored key") {
    auth::save_api_key(dir.path(), kKey);
    auth::attach_stored_api_key(providers["litellm"], dir.path());
    CHECK(providers["litellm"].stored_api_key == std::optional<std::string>(kKey));
    auth::attach_stored_api_key(providers["openai"], dir.path());
    CHECK(providers["openai"].stored_api_key == std::optional<std::string>(kKey));
    // `oss` has no env_key: it never reads the file, even a malformed one.
    auth::attach_stored_api_key(providers["oss"], dir.path());
    CHECK_FALSE(providers["oss"].stored_api_key.has_value());
    dir.write("auth.json", "garbage");
    CHECK_NOTHROW(auth::attach_stored_api_key(providers["oss"], dir.path()));
    CHECK_THROWS_AS(auth::attach_stored_api_key(providers["litellm"], dir.path()), auth::AuthError);
  }
}

TEST_CASE("bearer: literal token > env_key variable > stored key > error") {
  ModelProviderInfo p;
  p.id = "custom";
  p.env_key = "LLMX_TEST_BEARER_ORDER_KEY";
  p.env_key_instructions = "Set it.";
  p.experimental_bearer_token = "literal";
  p.stored_api_key = "stored";
  EnvVar env("LLMX_TEST_BEARER_ORDER_KEY", std::string("from-env"));
  CHECK(resolve_bearer_token(p).token == std::optional<std::string>("literal"));
  p.experimental_bearer_token.reset();
  CHECK(resolve_bearer_token(p).token == std::optional<std::string>("from-env"));
  {
    EnvVar blank("LLMX_TEST_BEARER_ORDER_KEY", std::string("  \t"));
    auto t = resolve_bearer_token(p);
    CHECK(t.token == std::optional<std::string>("stored"));
    CHECK_FALSE(t.error.has_value());
  }
  EnvVar unset("LLMX_TEST_BEARER_ORDER_KEY", std::nullopt);
  CHECK(resolve_bearer_token(p).token == std::optional<std::string>("stored"));
  p.stored_api_key.reset();
  auto t = resolve_bearer_token(p);
  CHECK_FALSE(t.token.has_value());
  CHECK(t.error == std::optional<std::string>("Missing environment variable: `LLMX_TEST_BEARER_ORDER_KEY`. Set it. "
                                              "Or run `llmx login --api-key` to store a key."));
}

TEST_CASE("bearer: without env_key only the built-in openai provider uses the stored key") {
  ModelProviderInfo p;
  p.id = "custom";
  p.stored_api_key = "stored";
  auto t = resolve_bearer_token(p);
  CHECK_FALSE(t.token.has_value());
  CHECK_FALSE(t.error.has_value());
  CHECK_FALSE(may_use_stored_api_key(p));
  p.id = "openai";
  CHECK(may_use_stored_api_key(p));
  CHECK(resolve_bearer_token(p).token == std::optional<std::string>("stored"));
}

TEST_CASE("bearer: the stored key never appears in the JSON of a provider or a Config") {
  const std::string secret = "sk-stored-secret-never-in-json-0123456789";
  Config cfg;
  cfg.provider = builtin_providers()["litellm"];
  cfg.provider.stored_api_key = secret;
  std::string provider_json = json::to_json(cfg.provider);
  std::string config_json = json::to_json(cfg);
  CHECK(provider_json.find(secret) == std::string::npos);
  CHECK(provider_json.find("stored_api_key") == std::string::npos);
  CHECK(config_json.find(secret) == std::string::npos);
  CHECK(config_json.find("stored_api_key") == std::string::npos);
  // The rest of the provider is still there, and decodes back without the key.
  CHECK(provider_json.find("\"env_key\":\"LLMX_API_KEY\"") != std::string::npos);
  auto back = json::parse_as<ModelProviderInfo>(provider_json);
  CHECK(back.env_key == std::optional<std::string>("LLMX_API_KEY"));
  CHECK_FALSE(back.stored_api_key.has_value());
  auto cfg_back = json::parse_as<Config>(config_json);
  CHECK(cfg_back.provider.id == "litellm");
  CHECK_FALSE(cfg_back.provider.stored_api_key.has_value());
}
