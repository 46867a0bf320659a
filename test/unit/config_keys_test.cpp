// Unit tests for the keys of config.toml (engine.md §4.4, §4.5, §10.1): defaults, types and
// values, unknown-key warnings, error positions, LLMX_HOME and .env, project trust, features,
// instructions files, MCP servers and AGENTS.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "protocol/config/config.hpp"
#include "protocol/config/config_write.hpp"
#include "test/support/unit_temp_dir.hpp"
#include "test/unit/config_test_env.hpp"

using namespace llmx;
namespace fs = std::filesystem;

namespace {

using namespace llmx::config_test;

// Loads with cwd in a scratch directory, away from any repository's AGENTS.md or trust entry.
Config load_in(const llmx::test::ScratchDir& cwd, ConfigOverrides o = {}) {
  o.cwd = cwd.path();
  return load_config(o);
}

std::string messages_of(const Config& cfg) {
  std::string out;
  for (const auto& w : cfg.warnings) out += w + "\n";
  return out;
}

}  // namespace

TEST_CASE("config: every key's default") {
  TempHome home;
  llmx::test::ScratchDir cwd;
  auto cfg = load_in(cwd);
  CHECK(cfg.review_model == "anthropic/claude-sonnet-4-20250514");
  CHECK_FALSE(cfg.active_profile.has_value());
  CHECK_FALSE(cfg.model_context_window.has_value());
  CHECK_FALSE(cfg.model_max_output_tokens.has_value());
  CHECK_FALSE(cfg.model_auto_compact_token_limit.has_value());
  CHECK_FALSE(cfg.model_verbosity.has_value());
  CHECK_FALSE(cfg.model_supports_reasoning_summaries.has_value());
  CHECK_FALSE(cfg.model_reasoning_summary_format.has_value());
  CHECK_FALSE(cfg.reasoning_effort.has_value());
  CHECK(cfg.reasoning_summary == "auto");
  CHECK_FALSE(cfg.notify.has_value());
  CHECK_FALSE(cfg.base_instructions.has_value());
  CHECK_FALSE(cfg.developer_instructions.has_value());
  CHECK_FALSE(cfg.compact_prompt.has_value());
  CHECK_FALSE(cfg.user_instructions.has_value());
  CHECK(cfg.project_doc_max_bytes == 32768);
  CHECK(cfg.project_doc_fallback_filenames.empty());
  CHECK(cfg.history.persistence == "save-all");
  CHECK_FALSE(cfg.history.max_bytes.has_value());
  CHECK_FALSE(cfg.hide_agent_reasoning);
  CHECK_FALSE(cfg.show_raw_agent_reasoning);
  CHECK(cfg.file_opener == "vscode");
  CHECK(cfg.chatgpt_base_url == "https://chatgpt.com/backend-api/");
  CHECK_FALSE(cfg.forced_login_method.has_value());
  CHECK_FALSE(cfg.forced_chatgpt_workspace_id.has_value());
  CHECK(cfg.mcp_oauth_credentials_store == "auto");
  CHECK(cfg.cli_auth_credentials_store == "file");
  CHECK(cfg.mcp_servers.empty());
  CHECK(cfg.rollout_fsync == "none");
  CHECK(cfg.sandbox_fallback == "refuse");
  CHECK_FALSE(cfg.allow_git_writes);
  CHECK(cfg.sandbox_policy.writable_roots.empty());
  CHECK_FALSE(cfg.sandbox_policy.network_access);
  CHECK(cfg.shell_environment_policy.inherit == "all");
  CHECK(cfg.warnings.empty());
  Features f = cfg.features;
  CHECK_FALSE(f.unified_exec);
  CHECK_FALSE(f.rmcp_client);
  CHECK_FALSE(f.apply_patch_freeform);
  CHECK(f.view_image_tool);
  CHECK_FALSE(f.web_search_request);
  CHECK_FALSE(f.experimental_sandbox_command_assessment);
  CHECK(f.ghost_commit);
  CHECK_FALSE(f.enable_experimental_windows_sandbox);
}

TEST_CASE("config: every key is read") {
  TempHome home(R"(
model = "m"
review_model = "r"
model_context_window = 100000
model_max_output_tokens = 4000
model_auto_compact_token_limit = 90000
model_verbosity = "low"
model_supports_reasoning_summaries = true
model_reasoning_summary_format = "experimental"
model_reasoning_effort = "minimal"
model_reasoning_summary = "detailed"
notify = ["notify-send", "llmx"]
instructions = "ignored"
developer_instructions = "dev"
compact_prompt = "  summarise  "
project_doc_max_bytes = 10
project_doc_fallback_filenames = [" CLAUDE.md ", "", "GUIDE.md"]
hide_agent_reasoning = true
show_raw_agent_reasoning = true
file_opener = "cursor"
chatgpt_base_url = "https://example.com/"
forced_login_method = "api"
forced_chatgpt_workspace_id = "ws"
mcp_oauth_credentials_store = "keyring"
cli_auth_credentials_store = "auto"
disable_paste_burst = true
windows_wsl_setup_acknowledged = true
approval_timeout = 30
sandbox_fallback = "unsandboxed-with-approval"
rollout_fsync = "turn"

[history]
persistence = "none"
max_bytes = 1000

[shell_environment_policy]
inherit = "core"
experimental_use_profile = true

[tui]
notifications = ["agent-turn-complete"]
[notice]
hide_full_access_warning = true
[otel]
environment = "prod"
exporter = { otlp-http = { endpoint = "http://x" } }
log_user_prompt = false
)");
  llmx::test::ScratchDir cwd;
  auto cfg = load_in(cwd);
  CHECK(messages_of(cfg) == "");
  CHECK(cfg.model == "m");
  CHECK(cfg.review_model == "r");
  CHECK(cfg.model_context_window == std::optional<int64_t>(100000));
  CHECK(cfg.model_max_output_tokens == std::optional<int64_t>(4000));
  CHECK(cfg.model_auto_compact_token_limit == std::optional<int64_t>(90000));
  CHECK(cfg.model_verbosity == std::optional<std::string>("low"));
  CHECK(cfg.model_supports_reasoning_summaries == std::optional<bool>(true));
  CHECK(cfg.model_reasoning_summary_format == std::optional<std::string>("experimental"));
  CHECK(cfg.reasoning_effort == std::optional<std::string>("minimal"));
  CHECK(cfg.reasoning_summary == "detailed");
  CHECK(cfg.notify == std::optional<std::vector<std::string>>({"notify-send", "llmx"}));
  CHECK(cfg.developer_instructions == std::optional<std::string>("dev"));
  CHECK(cfg.compact_prompt == std::optional<std::string>("summarise"));
  CHECK(cfg.project_doc_max_bytes == 10);
  CHECK(cfg.project_doc_fallback_filenames == std::vector<std::string>{"CLAUDE.md", "GUIDE.md"});
  CHECK(cfg.hide_agent_reasoning);
  CHECK(cfg.show_raw_agent_reasoning);
  CHECK(cfg.file_opener == "cursor");
  CHECK(cfg.chatgpt_base_url == "https://example.com/");
  CHECK(cfg.forced_login_method == std::optional<std::string>("api"));
  CHECK(cfg.forced_chatgpt_workspace_id == std::optional<std::string>("ws"));
  CHECK(cfg.mcp_oauth_credentials_store == "keyring");
  CHECK(cfg.cli_auth_credentials_store == "auto");
  CHECK(cfg.approval_timeout_ms == 30000);
  CHECK(cfg.sandbox_fallback == "unsandboxed-with-approval");
  CHECK(cfg.rollout_fsync == "turn");
  CHECK(cfg.history.persistence == "none");
  CHECK(cfg.history.max_bytes == std::optional<int64_t>(1000));
  CHECK(cfg.shell_environment_policy.inherit == "core");
}

TEST_CASE("config: compact_prompt is trimmed and empty means unset") {
  TempHome home("compact_prompt = \"  \\n \"\n");
  llmx::test::ScratchDir cwd;
  CHECK_FALSE(load_in(cwd).compact_prompt.has_value());
}

TEST_CASE("config: instructions files are read relative to cwd") {
  TempHome home(R"(
experimental_instructions_file = "sys.md"
experimental_compact_prompt_file = "compact.md"
compact_prompt = "from key"
[profiles.p]
experimental_instructions_file = "other.md"
)");
  llmx::test::ScratchDir cwd;
  cwd.write("sys.md", "\n  You are llmx.  \n");
  cwd.write("compact.md", " squeeze ");
  cwd.write("other.md", "profile prompt");
  auto cfg = load_in(cwd);
  CHECK(cfg.base_instructions == std::optional<std::string>("You are llmx."));
  CHECK(cfg.compact_prompt == std::optional<std::string>("squeeze"));
  ConfigOverrides o;
  o.profile = "p";
  CHECK(load_in(cwd, o).base_instructions == std::optional<std::string>("profile prompt"));
  o.base_instructions = "typed";
  o.compact_prompt = "typed compact";
  cfg = load_in(cwd, o);
  CHECK(cfg.base_instructions == std::optional<std::string>("typed"));
  CHECK(cfg.compact_prompt == std::optional<std::string>("typed compact"));
  SUBCASE("an empty file is an error naming it") {
    cwd.write("sys.md", " \n\t\n");
    std::string expected = home.file() + ":2:34: instructions file `" + cwd.at("sys.md") + "` is empty";
    CHECK_THROWS_WITH_AS(load_in(cwd), expected.c_str(), ConfigError);
  }
  SUBCASE("a missing file is an error naming it") {
    cwd.remove("compact.md");
    CHECK_THROWS_WITH_AS(load_in(cwd), doctest::Contains("compact.md"), ConfigError);
  }
}

TEST_CASE("config: unknown keys are warnings naming file and line") {
  TempHome home(R"(model = "m"
modle = "x"
[profiles.p]
modle = 1
[history]
persistence = "none"
maxbytes = 3
[features]
unified_exec = true
bogus = true
[tui]
anything = 1
[mcp_servers.s]
command = "c"
comand = "typo"
[model_providers.litellm]
max_token = 5
)");
  llmx::test::ScratchDir cwd;
  auto cfg = load_in(cwd, with_c({"modle2=x"}));
  const std::string f = home.file();
  std::vector<std::string> expected = {
      f + ":2: unknown key `modle` (ignored)",
      "-c modle2=x: unknown key `modle2` (ignored)",
      f + ":10: unknown feature `features.bogus` (ignored)",
      f + ":4: unknown key `profiles.p.modle` (ignored)",
      f + ":17: unknown key `model_providers.litellm.max_token` (ignored)",
      f + ":7: unknown key `history.maxbytes` (ignored)",
      f + ":15: unknown key `mcp_servers.s.comand` (ignored)",
  };
  std::sort(expected.begin(), expected.end());
  auto got = cfg.warnings;
  std::sort(got.begin(), got.end());
  CHECK(got == expected);
  CHECK(cfg.model == "m");
  CHECK(cfg.features.unified_exec);
}

TEST_CASE("config: bad values name file, line, column and key") {
  llmx::test::ScratchDir cwd;
  auto error_of = [&](const std::string& toml, ConfigOverrides o = {}) -> std::string {
    TempHome home(toml);
    try {
      load_in(cwd, o);
    } catch (const ConfigError& e) {
      std::string msg = e.what();
      auto pos = msg.find(home.file());
      return pos == 0 ? "<file>" + msg.substr(home.file().size()) : msg;
    }
    return "no error";
  };
  CHECK(error_of("\n\nmodel = 5\n") == "<file>:3:9: invalid type for `model`: expected a string, got an integer");
  CHECK(error_of("approval_policy = \"sometimes\"\n") ==
        "<file>:1:19: unknown value `sometimes` for `approval_policy`: expected `untrusted`, `on-failure`, "
        "`on-request` or `never`");
  CHECK(error_of("[profiles.p]\nmodel_reasoning_effort = \"turbo\"\n") ==
        "<file>:2:26: unknown value `turbo` for `profiles.p.model_reasoning_effort`: expected `none`, `minimal`, "
        "`low`, `medium`, `high`, `xhigh`, `max`, `ultra` or `persistent`");
  CHECK(error_of("[sandbox_workspace_write]\nwritable_roots = [\"/a\", 1]\n") ==
        "<file>:2:25: invalid type for `sandbox_workspace_write.writable_roots[1]`: expected a string, got an integer");
  CHECK(error_of("history = 1\n") == "<file>:1:11: invalid type for `history`: expected a table, got an integer");
  CHECK(error_of("project_doc_max_bytes = -1\n") ==
        "<file>:1:25: invalid value for `project_doc_max_bytes`: expected an integer of at least 0, got -1");
  CHECK(error_of("rollout_fsync = \"sometimes\"\n") ==
        "<file>:1:17: unknown value `sometimes` for `rollout_fsync`: expected `none`, `turn` or `always`");
  CHECK(error_of("[features]\nghost_commit = \"yes\"\n") ==
        "<file>:2:16: invalid type for `features.ghost_commit`: expected a boolean, got a string");
  CHECK(error_of("[history]\npersistence = \"some\"\n") ==
        "<file>:2:15: unknown value `some` for `history.persistence`: expected `save-all` or `none`");
  CHECK(error_of("[model_providers.litellm]\nmax_tokens = \"many\"\n") ==
        "<file>:2:14: invalid type for `model_providers.litellm.max_tokens`: expected an integer, got a string");
  CHECK(error_of("", with_c({"approval_policy=5"})) ==
        "-c approval_policy=5: invalid type for `approval_policy`: expected a string, got an integer");
  CHECK(error_of("", with_c({"model_context_window=lots"})) ==
        "-c model_context_window=lots: invalid type for `model_context_window`: expected an integer, got a string");
  ConfigOverrides json;
  json.json_overrides = {{"approval_timeout", RawJson{R"("soon")"}}};
  CHECK(error_of("", json) ==
        "config override `approval_timeout`: invalid type for `approval_timeout`: expected an integer, got a string");
}

TEST_CASE("config: a missing profile names the file and the profile") {
  TempHome home("profile = \"gone\"\n[profiles.here]\n");
  llmx::test::ScratchDir cwd;
  std::string expected = home.file() + ": config profile `gone` not found (no [profiles.gone] table)";
  CHECK_THROWS_WITH_AS(load_in(cwd), expected.c_str(), ConfigError);
  ConfigOverrides o;
  o.profile = "here";
  CHECK(load_in(cwd, o).active_profile == std::optional<std::string>("here"));
}

TEST_CASE("config: LLMX_HOME must be an existing directory, and is canonicalised") {
  llmx::test::ScratchDir dir;
  {
    EnvGuard env("LLMX_HOME", dir.at("missing"));
    std::string expected = "LLMX_HOME points to `" + dir.at("missing") + "`, which does not exist";
    CHECK_THROWS_WITH_AS(llmx_home(), expected.c_str(), ConfigError);
    CHECK_THROWS_AS(load_config({}), ConfigError);
  }
  {
    dir.write("file", "");
    EnvGuard env("LLMX_HOME", dir.at("file"));
    CHECK_THROWS_WITH_AS(llmx_home(), doctest::Contains("is not a directory"), ConfigError);
  }
  {
    fs::create_directories(dir.at("real"));
    fs::create_directory_symlink(dir.at("real"), dir.at("link"));
    EnvGuard env("LLMX_HOME", dir.at("link") + "/../real/.");
    CHECK(llmx_home() == fs::canonical(dir.at("real")).string());
  }
  {
    EnvGuard env("LLMX_HOME", std::string());
    EnvGuard h("HOME", std::string("/home/someone"));
    CHECK(llmx_home() == "/home/someone/.llmx");
  }
}

TEST_CASE("config: .env is loaded except LLMX_ keys") {
  llmx::test::ScratchDir home;
  home.write(".env",
             "# comment\n"
             "LLMXTEST_PLAIN=plain value  # trailing comment\n"
             "export LLMXTEST_EXPORTED=yes\n"
             "LLMXTEST_DQ=\"a \\\"quoted\\\" # not a comment\\nline\"\n"
             "LLMXTEST_SQ='lit\\n'\r\n"
             "LLMXTEST_EMPTY=\n"
             "  LLMXTEST_SPACED = spaced  \n"
             "not a pair\n"
             "LLMX_API_KEY=from-dotenv\n"
             "llmx_lower=from-dotenv\n"
             "LLMXTEST_OVERRIDE=new");  // the last line needs no line end
  EnvGuard a("LLMXTEST_PLAIN", std::nullopt), b("LLMXTEST_EXPORTED", std::nullopt), c("LLMXTEST_DQ", std::nullopt),
      d("LLMXTEST_SQ", std::nullopt), e("LLMXTEST_EMPTY", std::nullopt), f("LLMXTEST_SPACED", std::nullopt),
      g("LLMX_API_KEY", std::string("from-env")), h("llmx_lower", std::nullopt),
      i("LLMXTEST_OVERRIDE", std::string("old"));
  load_dotenv(home.path());
  auto get = [](const char* n) { return getenv(n) ? std::optional<std::string>(getenv(n)) : std::nullopt; };
  CHECK(get("LLMXTEST_PLAIN") == std::optional<std::string>("plain value"));
  CHECK(get("LLMXTEST_EXPORTED") == std::optional<std::string>("yes"));
  CHECK(get("LLMXTEST_DQ") == std::optional<std::string>("a \"quoted\" # not a comment\nline"));
  CHECK(get("LLMXTEST_SQ") == std::optional<std::string>("lit\\n"));
  CHECK(get("LLMXTEST_EMPTY") == std::optional<std::string>(""));
  CHECK(get("LLMXTEST_SPACED") == std::optional<std::string>("spaced"));
  CHECK(get("LLMX_API_KEY") == std::optional<std::string>("from-env"));
  CHECK_FALSE(get("llmx_lower").has_value());
  CHECK(get("LLMXTEST_OVERRIDE") == std::optional<std::string>("new"));  // as the reference: .env wins
  load_dotenv(home.at("nowhere"));                                       // a missing file is fine
}

TEST_CASE("config: a trusted project defaults to workspace-write") {
  llmx::test::ScratchDir work;
  fs::create_directories(work.at("repo/.git"));
  work.write("repo/sub/keep", "");
  work.write("other/keep", "");
  std::string repo = fs::canonical(work.at("repo")).string();
  TempHome home("[projects.\"" + repo + "\"]\ntrust_level = \"trusted\"\n");
  auto mode_in = [&](const std::string& dir, ConfigOverrides o = {}) {
    o.cwd = dir;
    return load_config(o).sandbox_policy.mode;
  };
  CHECK(mode_in(work.at("repo")) == SandboxMode::workspace_write);
  CHECK(mode_in(work.at("repo/sub")) == SandboxMode::workspace_write);  // through the git root
  CHECK(mode_in(work.at("other")) == SandboxMode::read_only);
  CHECK(mode_in(work.at("repo"), with_c({"sandbox_mode=read-only"})) == SandboxMode::read_only);
  ConfigOverrides typed;
  typed.sandbox_mode = SandboxMode::danger_full_access;
  CHECK(mode_in(work.at("repo"), typed) == SandboxMode::danger_full_access);
  CHECK(load_in(work).approval_policy == AskForApproval::on_request);
  SUBCASE("a worktree inherits its main repository's trust") {
    work.write("wt/.git", "gitdir: " + repo + "/.git/worktrees/wt\n");
    CHECK(mode_in(work.at("wt")) == SandboxMode::workspace_write);
  }
  SUBCASE("other trust levels do not count") {
    home.write("[projects.\"" + repo + "\"]\ntrust_level = \"untrusted\"\n");
    CHECK(mode_in(work.at("repo")) == SandboxMode::read_only);
  }
}

TEST_CASE("config: features, legacy aliases and their order") {
  llmx::test::ScratchDir cwd;
  SUBCASE("legacy top-level keys and [tools]") {
    TempHome home(R"(
experimental_use_unified_exec_tool = true
experimental_use_rmcp_client = true
include_apply_patch_tool = true
experimental_sandbox_command_assessment = true
[tools]
web_search = true
view_image = false
)");
    auto f = load_in(cwd).features;
    CHECK(f.unified_exec);
    CHECK(f.rmcp_client);
    CHECK(f.apply_patch_freeform);
    CHECK(f.experimental_sandbox_command_assessment);
    CHECK(f.web_search_request);
    CHECK_FALSE(f.view_image_tool);
  }
  SUBCASE("defaults < legacy < [features] < profile legacy < profile [features] < -c") {
    TempHome home(R"(
experimental_use_unified_exec_tool = true
experimental_use_freeform_apply_patch = true
[features]
unified_exec = false
web_search = true
ghost_commit = false
[profiles.p]
experimental_use_unified_exec_tool = true
tools_view_image = false
tools_web_search = false
[profiles.p.features]
web_search_request = true
enable_experimental_windows_sandbox = true
)");
    auto f = load_in(cwd).features;
    CHECK_FALSE(f.unified_exec);    // [features] over the legacy key
    CHECK(f.apply_patch_freeform);  // legacy key alone
    CHECK(f.web_search_request);    // alias inside [features]
    CHECK_FALSE(f.ghost_commit);
    ConfigOverrides o;
    o.profile = "p";
    f = load_in(cwd, o).features;
    CHECK(f.unified_exec);           // profile legacy over top-level [features]
    CHECK_FALSE(f.view_image_tool);  // profile tools_view_image
    CHECK(f.web_search_request);     // profile [features] over profile tools_web_search
    CHECK(f.enable_experimental_windows_sandbox);
    o.cli_overrides = {"features.unified_exec=false", "features.ghost_commit=true"};
    f = load_in(cwd, o).features;
    CHECK_FALSE(f.unified_exec);  // -c over the profile
    CHECK(f.ghost_commit);
  }
}

TEST_CASE("config: the profile's keys and overrides of them") {
  TempHome home(R"(
model_verbosity = "high"
chatgpt_base_url = "https://top/"
[profiles.p]
model_verbosity = "low"
chatgpt_base_url = "https://profile/"
model_reasoning_summary = "none"
sandbox_mode = "workspace-write"
)");
  llmx::test::ScratchDir cwd;
  ConfigOverrides o;
  o.profile = "p";
  auto cfg = load_in(cwd, o);
  CHECK(cfg.model_verbosity == std::optional<std::string>("low"));
  CHECK(cfg.chatgpt_base_url == "https://profile/");
  CHECK(cfg.reasoning_summary == "none");
  CHECK(cfg.sandbox_policy.mode == SandboxMode::workspace_write);
  o.cli_overrides = {"model_verbosity=medium"};
  o.json_overrides = {{"sandbox_mode", RawJson{R"("read-only")"}}};
  cfg = load_in(cwd, o);
  CHECK(cfg.model_verbosity == std::optional<std::string>("medium"));
  CHECK(cfg.sandbox_policy.mode == SandboxMode::read_only);
  CHECK(cfg.chatgpt_base_url == "https://profile/");
}

TEST_CASE("config: MCP servers") {
  llmx::test::ScratchDir cwd;
  SUBCASE("stdio and streamable HTTP") {
    TempHome home(R"(
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs"]
env = { TOKEN = "t" }
env_vars = ["HOME"]
cwd = "/srv"
startup_timeout_ms = 2500
enabled_tools = ["search"]

[mcp_servers.remote]
url = "https://example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
http_headers = { X-A = "1" }
startup_timeout_sec = 3.5
startup_timeout_ms = 100
tool_timeout_sec = 7
enabled = false
)");
    auto cfg = load_in(cwd);
    REQUIRE(cfg.mcp_servers.size() == 2);
    const auto& d = cfg.mcp_servers.at("docs");
    CHECK(d.is_stdio());
    CHECK(d.command == std::optional<std::string>("npx"));
    CHECK(d.args == std::vector<std::string>{"-y", "docs"});
    CHECK(d.env.at("TOKEN") == "t");
    CHECK(d.env_vars == std::vector<std::string>{"HOME"});
    CHECK(d.cwd == std::optional<std::string>("/srv"));
    CHECK(d.startup_timeout() == doctest::Approx(2.5));
    CHECK(d.tool_timeout() == doctest::Approx(60.0));
    CHECK(d.enabled);
    CHECK(d.enabled_tools == std::optional<std::vector<std::string>>({"search"}));
    CHECK_FALSE(d.disabled_tools.has_value());
    const auto& r = cfg.mcp_servers.at("remote");
    CHECK_FALSE(r.is_stdio());
    CHECK(r.url == std::optional<std::string>("https://example.com/mcp"));
    CHECK(r.bearer_token_env_var == std::optional<std::string>("REMOTE_TOKEN"));
    CHECK(r.http_headers.at("X-A") == "1");
    CHECK(r.startup_timeout() == doctest::Approx(3.5));  // _sec wins over _ms
    CHECK(r.tool_timeout() == doctest::Approx(7.0));
    CHECK_FALSE(r.enabled);
  }
  SUBCASE("fields of the other transport, no transport, bearer_token") {
    auto error_of = [&](const std::string& toml) -> std::string {
      TempHome home(toml);
      try {
        load_in(cwd);
      } catch (const ConfigError& e) {
        return std::string(e.what()).substr(home.file().size());
      }
      return "no error";
    };
    CHECK(error_of("[mcp_servers.s]\ncommand = \"c\"\nurl = \"http://x\"\n") ==
          ":3:7: invalid `mcp_servers.s`: url is not supported for stdio");
    CHECK(error_of("[mcp_servers.s]\nurl = \"http://x\"\nargs = []\n") ==
          ":3:8: invalid `mcp_servers.s`: args is not supported for streamable_http");
    CHECK(error_of("[mcp_servers.s]\nargs = []\n") ==
          ":1:1: invalid `mcp_servers.s`: invalid transport (set `command` for stdio or `url` for streamable HTTP)");
    CHECK(error_of("[mcp_servers.s]\nurl = \"http://x\"\nbearer_token = \"t\"\n") ==
          ":3:16: mcp_servers.s uses unsupported `bearer_token`; set `bearer_token_env_var`.");
  }
  SUBCASE("servers written by add_mcp_server load back") {
    TempHome home("model = \"m\"\n");
    McpServerConfig s;
    s.command = "srv";
    s.args = {"--flag"};
    s.env = {{"K", "v w"}};
    s.startup_timeout_sec = 12.5;
    add_mcp_server(llmx_home(), "mine", s);
    auto cfg = load_in(cwd);
    REQUIRE(cfg.mcp_servers.count("mine") == 1);
    const auto& m = cfg.mcp_servers.at("mine");
    CHECK(m.command == std::optional<std::string>("srv"));
    CHECK(m.args == std::vector<std::string>{"--flag"});
    CHECK(m.env.at("K") == "v w");
    CHECK(m.startup_timeout() == doctest::Approx(12.5));
    CHECK(cfg.model == "m");
  }
}

TEST_CASE("config: AGENTS.md from the home and the project become user_instructions") {
  TempHome home;
  std::ofstream(fs::path(llmx_home()) / "AGENTS.md") << "global rules\n";
  llmx::test::ScratchDir cwd;
  fs::create_directories(cwd.at(".git"));
  cwd.write("AGENTS.md", "project rules\n");
  cwd.write("NOTES.md", "notes\n");
  cwd.write("sub/NOTES.md", "sub notes\n");
  auto cfg = load_in(cwd);
  CHECK(cfg.user_instructions == std::optional<std::string>("global rules\n\n--- project-doc ---\n\nproject rules\n"));
  ConfigOverrides o;
  o.cwd = cwd.at("sub");
  o.cli_overrides = {R"(project_doc_fallback_filenames=["NOTES.md"])"};
  CHECK(load_config(o).user_instructions ==
        std::optional<std::string>("global rules\n\n--- project-doc ---\n\nproject rules\n\n\nsub notes\n"));
  o.cli_overrides = {"project_doc_max_bytes=0"};
  CHECK(load_config(o).user_instructions == std::optional<std::string>("global rules"));
}
