// Settings through the real binary: config.toml warnings and errors, comment-preserving writes
// (setDefaultModel, `llmx mcp add`), `llmx login` / auth.json, and the paginated model list.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test/support/harness.hpp"

using namespace llmx::test;
namespace fs = std::filesystem;

namespace {
// Runs llmx with `input` on stdin.
ExecResult run_with_stdin(const std::vector<std::string>& args, const EnvVars& env, const std::string& input) {
  SpawnOptions o;
  o.argv = {LLMX_BIN};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = env;
  o.unset_env = {"LLMX_API_KEY", "LLMX_HOME", "LLMX_BASE_URL"};
  ChildProcess p(std::move(o));
  p.write_stdin(input);
  p.close_stdin();
  ExecResult r;
  r.status = p.wait();
  r.out = p.read_all_stdout(std::chrono::milliseconds(1000));
  r.err = p.read_all_stderr(std::chrono::milliseconds(1000));
  return r;
}

const char* kCommentedConfig = R"(# my llmx settings
model = "gpt-4o"   # the model I like

# approvals
approval_policy = "on-request"

[profiles.fast]
model = "gpt-4o-mini" # fast one
)";
}  // namespace

TEST_CASE("settings: unknown keys warn with file and line, bad values and missing profiles are errors") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  home.write("config.toml", "model = \"gpt-4o\"\nmodle = \"typo\"\n");
  auto ok = run_llmx({"exec", "--skip-git-repo-check", "@mock:text deltas=1"}, env);
  INFO("stderr: " << ok.err);
  CHECK(ok.status.ok());
  CHECK(contains(ok.err, home.file("config.toml") + ":2"));
  CHECK(contains(ok.err, "modle"));

  home.write("config.toml", "model = \"gpt-4o\"\napproval_policy = 5\n");
  auto bad = run_llmx({"exec", "--skip-git-repo-check", "@mock:text deltas=1"}, env);
  CHECK(bad.status.code == 1);
  CHECK(contains(bad.err, home.file("config.toml") + ":2"));
  CHECK(contains(bad.err, "approval_policy"));

  home.write("config.toml", "model = [\n");
  auto syntax = run_llmx({"exec", "--skip-git-repo-check", "x"}, env);
  CHECK(syntax.status.code == 1);
  CHECK(contains(syntax.err, home.file("config.toml") + ":"));
  CHECK(read_file(home.file("config.toml")) == "model = [\n");  // never rewritten

  home.write("config.toml", "model = \"gpt-4o\"\n");
  auto profile = run_llmx({"exec", "--skip-git-repo-check", "-p", "nope", "x"}, env);
  CHECK(profile.status.code == 1);
  CHECK(contains(profile.err, "nope"));

  // -c wins over config.toml and reaches the model request.
  auto over = run_llmx({"exec", "--skip-git-repo-check", "-c", "model=from-cli", "@mock:text deltas=1"}, env);
  CHECK(over.status.ok());
  CHECK(contains(mock.requests_json(), R"("model":"from-cli")"));
}

TEST_CASE("settings: setDefaultModel writes config.toml keeping the user's comments and layout") {
  TempDir home;
  MockLlm mock;
  home.write("config.toml", kCommentedConfig);
  McpClient mcp(home.path(), mock.url());
  mcp.initialize();
  auto r = mcp.wait_for_response(mcp.request("setDefaultModel", R"({"model":"gpt-4.1","reasoningEffort":"high"})"));
  INFO(r.line());
  REQUIRE_FALSE(r.is_error());
  auto text = read_file(home.file("config.toml"));
  INFO(text);
  CHECK(contains(text, "# my llmx settings\n"));
  CHECK(contains(text, "model = \"gpt-4.1\"   # the model I like\n"));
  CHECK(contains(text, "model_reasoning_effort = \"high\""));
  CHECK(contains(text, "# approvals\napproval_policy = \"on-request\"\n"));
  CHECK(contains(text, "[profiles.fast]\nmodel = \"gpt-4o-mini\" # fast one\n"));

  auto cleared = mcp.wait_for_response(mcp.request("setDefaultModel", R"({"model":"gpt-4.1","reasoningEffort":null})"));
  REQUIRE_FALSE(cleared.is_error());
  text = read_file(home.file("config.toml"));
  CHECK_FALSE(contains(text, "model_reasoning_effort"));
  CHECK(contains(text, "# my llmx settings\n"));
}

TEST_CASE("settings: llmx mcp add/remove edit config.toml without losing comments") {
  TempDir home;
  home.write("config.toml", kCommentedConfig);
  EnvVars env{{"LLMX_HOME", home.path()}};
  auto add = run_llmx({"mcp", "add", "docs", "--env", "TOKEN=abc", "--", "docs-server", "--stdio"}, env);
  INFO("stdout: " << add.out << "\nstderr: " << add.err);
  REQUIRE(add.status.ok());
  auto text = read_file(home.file("config.toml"));
  CHECK(contains(text, kCommentedConfig));
  CHECK(contains(text, "[mcp_servers.docs]"));
  CHECK(contains(text, "docs-server"));
  auto list = run_llmx({"mcp", "list", "--json"}, env);
  CHECK(list.status.ok());
  CHECK(contains(list.out, "docs-server"));
  auto rm = run_llmx({"mcp", "remove", "docs"}, env);
  CHECK(rm.status.ok());
  CHECK(read_file(home.file("config.toml")).find("mcp_servers") == std::string::npos);
  CHECK(contains(read_file(home.file("config.toml")), kCommentedConfig));
}

TEST_CASE("settings: llmx login stores the key 0600 without echoing it, requests use it, logout removes it") {
  TempDir home;
  MockLlm mock;
  EnvVars env{{"LLMX_HOME", home.path()}};
  const std::string key = "sk-test-0123456789abcdefXYZ";
  auto login = run_with_stdin({"login", "--api-key"}, env, key + "\n");
  INFO("stdout: " << login.out << "\nstderr: " << login.err);
  REQUIRE(login.status.ok());
  CHECK_FALSE(contains(login.out + login.err, key));
  struct stat st {};
  REQUIRE(::stat(home.file("auth.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto status = run_with_stdin({"login", "status"}, env, "");
  CHECK(status.status.ok());
  CHECK(contains(status.out, "API key"));
  CHECK_FALSE(contains(status.out + status.err, key));

  // No LLMX_API_KEY in the environment: the stored key authenticates the default provider.
  auto exec_env = env;
  exec_env.push_back({"LLMX_BASE_URL", mock.url()});
  auto r = run_with_stdin({"exec", "--skip-git-repo-check", "@mock:text deltas=1"}, exec_env, "");
  INFO("exec stderr: " << r.err);
  CHECK(r.status.ok());
  CHECK(contains(http_get(mock.url(), "/_mock/headers"), "Bearer " + key));

  auto logout = run_with_stdin({"logout"}, env, "");
  CHECK(logout.status.ok());
  CHECK_FALSE(fs::exists(home.file("auth.json")));
  auto after = run_with_stdin({"login", "status"}, env, "");
  CHECK(after.status.code == 1);
}

TEST_CASE("settings: model/list pages through the catalogue with the configured model first") {
  InitializedMcp f;
  std::vector<std::string> ids;
  std::string cursor;
  for (int i = 0; i < 10; ++i) {
    std::string params = cursor.empty() ? R"({"limit":1})" : R"({"limit":1,"cursor":")" + cursor + R"("})";
    auto r = f.mcp.wait_for_response(f.mcp.request("model/list", params));
    INFO(r.line());
    REQUIRE_FALSE(r.is_error());
    REQUIRE(r.at("/result/items").get_array().value_unsafe().size() == 1);
    ids.push_back(r.str("/result/items/0/id"));
    if (i == 0) CHECK(r.boolean("/result/items/0/isDefault"));
    if (r.at("/result/nextCursor").is_null()) break;
    cursor = r.str("/result/nextCursor");
  }
  // What the mock serves (its /v1/models with LiteLLM's /model/info), after the configured model,
  // which it does not list; no embedding model, no wildcard route.
  CHECK(ids == std::vector<std::string>{"anthropic/claude-sonnet-4-20250514", "mock-model", "mock-vision",
                                        "mock-reasoner", "claude-mock", "mock-tiny"});
  auto all = f.mcp.wait_for_response(f.mcp.request("model/list", R"({"pageSize":100})"));
  CHECK(all.at("/result/items").get_array().value_unsafe().size() == ids.size());
  auto bad = f.mcp.wait_for_response(f.mcp.request("model/list", R"({"cursor":"x"})"));
  CHECK(bad.integer("/error/code") == -32602);
}
