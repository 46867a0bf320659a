// Unit tests for configuration loading (engine.md §4, DECISIONS E7): layering of config.toml,
// profiles, `-c` overrides, JSON overrides and typed overrides; providers; error messages.
#include "protocol/config/config.hpp"
#include "protocol/base/json_reader.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "test/unit/config_test_env.hpp"

using namespace llmx;
namespace fs = std::filesystem;

namespace {

using namespace llmx::config_test;

const char* kLayered = R"(
model = "from-file"
approval_policy = "never"

[profiles.fast]
model = "from-profile"
approval_policy = "untrusted"

[profiles.empty]
)";

}  // namespace

TEST_CASE("config: defaults when there is no config.toml") {
  TempHome home;
  auto cfg = load_config({});
  CHECK(cfg.model == "anthropic/claude-sonnet-4-20250514");
  CHECK(cfg.approval_policy == AskForApproval::on_request);
  CHECK(cfg.sandbox_policy.mode == SandboxMode::read_only);
  CHECK(cfg.provider.id == "litellm");
  CHECK(cfg.provider.name == "LiteLLM");
  CHECK(cfg.provider.wire_api == WireApi::chat);
  CHECK(cfg.provider.base_url == "http://localhost:4000/v1");
  CHECK(cfg.provider.env_key == std::optional<std::string>("LLMX_API_KEY"));
  CHECK_FALSE(cfg.provider.max_tokens.has_value());
  CHECK(cfg.approval_timeout_ms == 600000);
  CHECK(cfg.llmx_home == llmx_home());
}

TEST_CASE("config: precedence defaults < config.toml < profile < -c < typed overrides") {
  TempHome home(kLayered);
  SUBCASE("config.toml over defaults") {
    auto cfg = load_config({});
    CHECK(cfg.model == "from-file");
    CHECK(cfg.approval_policy == AskForApproval::never);
  }
  SUBCASE("profile over config.toml") {
    auto cfg = load_config({.profile = "fast"});
    CHECK(cfg.model == "from-profile");
    CHECK(cfg.approval_policy == AskForApproval::untrusted);
  }
  SUBCASE("a profile without the keys falls back to config.toml") {
    auto cfg = load_config({.profile = "empty"});
    CHECK(cfg.model == "from-file");
    CHECK(cfg.approval_policy == AskForApproval::never);
  }
  SUBCASE("-c over config.toml") {
    auto cfg = load_config(with_c({"model=from-c", "approval_policy=on-failure"}));
    CHECK(cfg.model == "from-c");
    CHECK(cfg.approval_policy == AskForApproval::on_failure);
  }
  SUBCASE("-c over profile") {
    auto o = with_c({"model=from-c", "approval_policy=on-failure"});
    o.profile = "fast";
    auto cfg = load_config(o);
    CHECK(cfg.model == "from-c");
    CHECK(cfg.approval_policy == AskForApproval::on_failure);
  }
  SUBCASE("-c can change a profile's own keys") {
    auto o = with_c({"profiles.fast.model=patched"});
    o.profile = "fast";
    CHECK(load_config(o).model == "patched");
  }
  SUBCASE("typed overrides over everything") {
    auto o = with_c({"model=from-c", "approval_policy=on-failure"});
    o.profile = "fast";
    o.model = "typed";
    o.approval_policy = AskForApproval::on_request;
    auto cfg = load_config(o);
    CHECK(cfg.model == "typed");
    CHECK(cfg.approval_policy == AskForApproval::on_request);
  }
}

TEST_CASE("config: the profile can be chosen in config.toml or by -c") {
  TempHome home(std::string("profile = \"fast\"\n") + kLayered);
  CHECK(load_config({}).model == "from-profile");
  CHECK(load_config(with_c({"profile=empty"})).model == "from-file");
  ConfigOverrides typed;
  typed.profile = "empty";
  CHECK(load_config(typed).model == "from-file");
}

TEST_CASE("config: an unknown profile is an error naming it") {
  TempHome home(kLayered);
  ConfigOverrides o;
  o.profile = "ghost";
  CHECK_THROWS_WITH_AS(load_config(o), doctest::Contains("`ghost`"), ConfigError);
}

TEST_CASE("config: -c values are TOML when they parse, literal strings otherwise") {
  TempHome home;
  SUBCASE("bare words and model names are strings") {
    CHECK(load_config(with_c({"model=o3"})).model == "o3");
    CHECK(load_config(with_c({"model=gpt-4o"})).model == "gpt-4o");
    CHECK(load_config(with_c({"model=openai/gpt-4o-mini"})).model == "openai/gpt-4o-mini");
    CHECK(load_config(with_c({"model = spaced "})).model == "spaced");
  }
  SUBCASE("quoted values") {
    CHECK(load_config(with_c({R"(model="quoted")"})).model == "quoted");
    CHECK(load_config(with_c({"model='single'"})).model == "single");
    CHECK(load_config(with_c({R"(model="a b")"})).model == "a b");
  }
  SUBCASE("numbers and booleans keep their type") {
    auto cfg = load_config(with_c({"model_context_window=1000", "approval_timeout=5",
                                   "model_providers.litellm.include_usage=false",
                                   "model_providers.litellm.max_tokens=1234"}));
    CHECK(cfg.model_context_window == std::optional<int64_t>(1000));
    CHECK(cfg.approval_timeout_ms == 5000);
    CHECK_FALSE(cfg.provider.include_usage);
    CHECK(cfg.provider.max_tokens == std::optional<int64_t>(1234));
  }
  SUBCASE("a value of the wrong type is an error naming the key") {
    CHECK_THROWS_WITH_AS(load_config(with_c({"model_context_window=lots"})),
                         doctest::Contains("model_context_window"), ConfigError);
  }
  SUBCASE("dotted keys build tables") {
    auto cfg = load_config(with_c({"sandbox_mode=workspace-write", "sandbox_workspace_write.network_access=true",
                                   R"(sandbox_workspace_write.writable_roots=["/a","/b"])"}));
    CHECK(cfg.sandbox_policy.mode == SandboxMode::workspace_write);
    CHECK(cfg.sandbox_policy.network_access);
    CHECK(cfg.sandbox_policy.writable_roots == std::vector<std::string>{"/a", "/b"});
  }
  SUBCASE("malformed overrides") {
    CHECK_THROWS_WITH_AS(load_config(with_c({"model"})), "Invalid override (missing '='): model", ConfigError);
    CHECK_THROWS_WITH_AS(load_config(with_c({" =x"})), "Empty key in override:  =x", ConfigError);
  }
}

TEST_CASE("config: JSON overrides (the MCP tool's config object) are applied") {
  TempHome home(kLayered);
  ConfigOverrides o;
  o.json_overrides = {
      {"model", RawJson{R"("from-json")"}},
      {"model_providers.litellm.max_tokens", RawJson{"777"}},
      {"sandbox_mode", RawJson{R"("workspace-write")"}},
      {"sandbox_workspace_write", RawJson{R"({"network_access":true,"writable_roots":["/w"]})"}},
      {"model_reasoning_effort", RawJson{"null"}},  // null: ignored
  };
  auto cfg = load_config(o);
  CHECK(cfg.model == "from-json");
  CHECK(cfg.approval_policy == AskForApproval::never);  // untouched keys keep the file's value
  CHECK(cfg.provider.max_tokens == std::optional<int64_t>(777));
  CHECK(cfg.sandbox_policy.mode == SandboxMode::workspace_write);
  CHECK(cfg.sandbox_policy.network_access);
  CHECK(cfg.sandbox_policy.writable_roots == std::vector<std::string>{"/w"});
  CHECK_FALSE(cfg.reasoning_effort.has_value());
  o.model = "typed";
  CHECK(load_config(o).model == "typed");
}

TEST_CASE("config: an unknown provider id is an error naming it") {
  SUBCASE("in config.toml") {
    TempHome home("model_provider = \"nowhere\"\n");
    CHECK_THROWS_WITH_AS(load_config({}), "Model provider `nowhere` not found", ConfigError);
  }
  SUBCASE("as a typed override") {
    TempHome home;
    ConfigOverrides o;
    o.model_provider = "elsewhere";
    CHECK_THROWS_WITH_AS(load_config(o), doctest::Contains("`elsewhere`"), ConfigError);
  }
}

TEST_CASE("config: a new provider table needs a name") {
  TempHome home(R"(
model_provider = "mine"
[model_providers.mine]
base_url = "http://127.0.0.1:9/v1"
)");
  CHECK_THROWS_WITH_AS(load_config({}), doctest::Contains("name"), ConfigError);
  CHECK_THROWS_WITH_AS(load_config({}), doctest::Contains("mine"), ConfigError);
}

TEST_CASE("config: a user provider is selected with its fields") {
  TempHome home(R"(
model_provider = "mine"
[model_providers.mine]
name = "Mine"
base_url = "http://127.0.0.1:9/v1/"
env_key = "MINE_KEY"
max_tokens = 1000
request_max_retries = 1000
prompt_cache = true
query_params = { "api-version" = "2025-01-01" }
http_headers = { "X-Test" = "1" }
)");
  auto cfg = load_config({});
  CHECK(cfg.provider.id == "mine");
  CHECK(cfg.provider.name == "Mine");
  CHECK(cfg.provider.wire_api == WireApi::automatic);  // a provider llmx does not know: Responses, else Chat
  CHECK(cfg.provider.env_key == std::optional<std::string>("MINE_KEY"));
  CHECK(cfg.provider.max_tokens == std::optional<int64_t>(1000));
  CHECK(cfg.provider.request_max_retries == 100);  // capped
  CHECK(cfg.provider.prompt_cache == std::optional<bool>(true));
  CHECK(cfg.provider.http_headers.at("X-Test") == "1");
  CHECK(cfg.provider.chat_url() == "http://127.0.0.1:9/v1/chat/completions?api-version=2025-01-01");
}

TEST_CASE("config: a built-in provider's fields can be overridden (E7)") {
  TempHome home(R"(
[model_providers.litellm]
max_tokens = 8192
stream_idle_timeout_ms = 1234
)");
  auto cfg = load_config({});
  CHECK(cfg.provider.id == "litellm");
  CHECK(cfg.provider.max_tokens == std::optional<int64_t>(8192));
  CHECK(cfg.provider.stream_idle_timeout_ms == 1234);
  // Fields not mentioned keep the built-in values; no `name` needed.
  CHECK(cfg.provider.name == "LiteLLM");
  CHECK(cfg.provider.env_key == std::optional<std::string>("LLMX_API_KEY"));
  CHECK(cfg.provider.base_url == "http://localhost:4000/v1");
  CHECK(cfg.provider.wire_api == WireApi::chat);
}

TEST_CASE("config: LLMX_BASE_URL and LLMX_API_KEY configure the litellm provider (E7)") {
  TempHome home;
  {
    EnvGuard url("LLMX_BASE_URL", std::string("http://proxy.internal:8080/v1"));
    EnvGuard key("LLMX_API_KEY", std::string("sk-test-123"));
    auto cfg = load_config({});
    CHECK(cfg.provider.id == "litellm");  // not switched to another provider or wire
    CHECK(cfg.provider.wire_api == WireApi::chat);
    CHECK(cfg.provider.base_url == "http://proxy.internal:8080/v1");
    CHECK(cfg.provider.chat_url() == "http://proxy.internal:8080/v1/chat/completions");
    auto token = resolve_bearer_token(cfg.provider);
    CHECK(token.token == std::optional<std::string>("sk-test-123"));
    CHECK_FALSE(token.error.has_value());
  }
  {
    EnvGuard url("LLMX_BASE_URL", std::string("   "));  // blank: the default
    auto cfg = load_config({});
    CHECK(cfg.provider.base_url == "http://localhost:4000/v1");
    auto token = resolve_bearer_token(cfg.provider);
    CHECK_FALSE(token.token.has_value());
    REQUIRE(token.error.has_value());
    CHECK(token.error->find("LLMX_API_KEY") != std::string::npos);
  }
  {
    // A base_url in config.toml wins over the environment.
    home.write("[model_providers.litellm]\nbase_url = \"http://from-file/v1\"\n");
    EnvGuard url("LLMX_BASE_URL", std::string("http://from-env/v1"));
    CHECK(load_config({}).provider.base_url == "http://from-file/v1");
  }
}

TEST_CASE("config: bearer token order is literal, env_key, stored key (auth_test covers the rest)") {
  ModelProviderInfo p;
  p.env_key = "LLMX_TEST_UNSET_KEY_42";
  p.experimental_bearer_token = "literal";
  p.stored_api_key = "stored";
  CHECK(resolve_bearer_token(p).token == std::optional<std::string>("literal"));
  p.experimental_bearer_token.reset();
  CHECK(resolve_bearer_token(p).token == std::optional<std::string>("stored"));
  p.stored_api_key.reset();
  auto t = resolve_bearer_token(p);
  CHECK_FALSE(t.token.has_value());
  CHECK(t.error == std::optional<std::string>("Missing environment variable: `LLMX_TEST_UNSET_KEY_42`. "
                                              "Or run `llmx login --api-key` to store a key."));
  p.env_key.reset();
  t = resolve_bearer_token(p);
  CHECK_FALSE(t.token.has_value());
  CHECK_FALSE(t.error.has_value());
}

TEST_CASE("config: malformed config.toml is an error with the file path and line") {
  TempHome home("model = \"ok\"\napproval_policy = = \"never\"\n");
  try {
    load_config({});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    CAPTURE(msg);
    CHECK(msg.find(home.file()) != std::string::npos);
    CHECK(msg.find(home.file() + ":2:") != std::string::npos);
  }
}

TEST_CASE("config: bad values name the file and the key") {
  SUBCASE("wrong type") {
    TempHome home("model = 5\n");
    CHECK_THROWS_WITH_AS(load_config({}), doctest::Contains("`model`"), ConfigError);
    CHECK_THROWS_WITH_AS(load_config({}), doctest::Contains(home.file().c_str()), ConfigError);
  }
  SUBCASE("unknown enum value") {
    TempHome home("approval_policy = \"sometimes\"\n");
    CHECK_THROWS_WITH_AS(load_config({}), doctest::Contains("sometimes"), ConfigError);
  }
  SUBCASE("unknown sandbox mode") {
    TempHome home("sandbox_mode = \"wide-open\"\n");
    CHECK_THROWS_WITH_AS(load_config({}), doctest::Contains("wide-open"), ConfigError);
  }
}

TEST_CASE("config: cwd override is made absolute") {
  TempHome home;
  ConfigOverrides o;
  o.cwd = "/tmp/../tmp";
  auto cfg = load_config(o);
  CHECK(fs::path(cfg.cwd).is_absolute());
  CHECK(cfg.cwd == fs::weakly_canonical("/tmp").string());
}

TEST_CASE("config: the layers of config/read are JSON even when a -c flag is not UTF-8") {
  // fuzz_config_toml found this one: the flags' table went to JSON byte for byte, and reading
  // that JSON back threw out of config/read.
  TempHome home("model = \"m\"\n");
  ConfigOverrides o;
  // An unassigned code point (toml++ wrote it as `\U0004B34A`), stray continuation bytes, and a
  // key that is not UTF-8.
  o.cli_overrides = {"m = \"t\"\n[p]\xf1\x8b\x8d\x8a\x8c\x8b", "p\xfd\xff.k = 1", "n = 1.5", "d = 1979-05-27"};
  auto layers = config_layers_json(o);
  CHECK(layers.user == R"({"model":"m"})");
  INFO(layers.flags);
  json::Parser p;
  auto flags = p.parse(layers.flags);  // JSON simdjson reads
  CHECK(std::string(flags["m"].get_string().value()).find("[p]\xf1\x8b\x8d\x8a") != std::string::npos);
  CHECK(flags["p\xEF\xBF\xBD\xEF\xBF\xBD"]["k"].get_int64().value() == 1);
  CHECK(flags["n"].get_double().value() == 1.5);
  CHECK(std::string(flags["d"].get_string().value()) == "1979-05-27");
  CHECK(layers.merged.find(R"("model":"m")") != std::string::npos);
}
