// Which command lines the llmx binary starts as a stdio server before it loads the engine
// (tools/llmx/start/early_command.hpp): only forms the engine's command line accepts as they are;
// anything else is left to the engine.
#include <doctest/doctest.h>

#include <initializer_list>
#include <vector>

#include "tools/llmx/start/early_command.hpp"

using namespace llmx;

namespace {
std::optional<cli::EarlyCommand> early(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"llmx"};
  argv.insert(argv.end(), args.begin(), args.end());
  return cli::early_command(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("early command: the three stdio servers, bare") {
  REQUIRE(early({"mcp-server"}));
  CHECK(early({"mcp-server"})->front == cli::Front::mcp);
  CHECK(early({"app-server"})->front == cli::Front::app);
  CHECK(early({"acp"})->front == cli::Front::acp);
  CHECK_FALSE(early({}));
  CHECK_FALSE(early({"exec", "hi"}));
  CHECK_FALSE(early({"node"}));
}

TEST_CASE("early command: the common options become config overrides, the global -c first") {
  auto c = early({"-c", "a=1", "--config=b=2", "app-server", "-s", "read-only", "--ask-for-approval=never", "-m", "m1",
                  "--profile", "p", "-C", "/w", "-c", "d=4"});
  REQUIRE(c);
  CHECK(c->front == cli::Front::app);
  CHECK(c->overrides.cli_overrides == std::vector<std::string>{"a=1", "b=2", "d=4"});
  CHECK(c->overrides.sandbox_mode == SandboxMode::read_only);
  CHECK(c->overrides.approval_policy == AskForApproval::never);
  CHECK(c->overrides.model == "m1");
  CHECK(c->overrides.profile == "p");
  CHECK(c->overrides.cwd == "/w");
}

TEST_CASE("early command: what the engine's parser would refuse, or serves otherwise, is left to it") {
  CHECK_FALSE(early({"mcp-server", "--listen", "127.0.0.1:0"}));
  CHECK_FALSE(early({"mcp-server", "--listen=127.0.0.1:0"}));
  CHECK_FALSE(early({"app-server", "--nodes", "127.0.0.1:1"}));
  CHECK_FALSE(early({"app-server", "generate-ts", "-o", "x"}));
  CHECK_FALSE(early({"mcp-server", "--help"}));
  CHECK_FALSE(early({"mcp-server", "--bogus"}));
  CHECK_FALSE(early({"mcp-server", "-s", "nonsense"}));
  CHECK_FALSE(early({"mcp-server", "-a", "sometimes"}));
  CHECK_FALSE(early({"mcp-server", "-m"}));                  // a value missing
  CHECK_FALSE(early({"mcp-server", "-m", "--profile"}));     // a value that looks like an option
  CHECK_FALSE(early({"mcp-server", "--model="}));            // an empty value
  CHECK_FALSE(early({"mcp-server", "-m", "a", "-m", "b"}));  // a single value given twice
  CHECK_FALSE(early({"mcp-server", "extra"}));
  CHECK_FALSE(early({"--bogus", "mcp-server"}));
}
