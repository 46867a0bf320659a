// LiteLLM as a first-class provider (issue 19), through the real binary against mock-llm: the
// live model list (model/list, `llmx models`, ACP's selector), a proxy that is down at start or
// whose /model/info is malformed, behaviour taken from the model's metadata, and the Responses →
// Chat fallback of `wire_api = "auto"`.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "test/support/harness.hpp"
#include "test/support/temp_dir.hpp"

using namespace llmx::test;

namespace {

std::vector<std::string> ids_of(const Message& m, std::string_view array) {
  std::vector<std::string> out;
  for (size_t i = 0; i < array_size(m, array); ++i) out.push_back(m.str(std::string(array) + "/" + std::to_string(i) + "/id"));
  return out;
}

// The entry of `array` whose id is `id`, as its own message.
Message entry(const Message& m, std::string_view array, std::string_view id) {
  for (size_t i = 0; i < array_size(m, array); ++i) {
    auto at = std::string(array) + "/" + std::to_string(i);
    if (m.str(at + "/id") == id) return Message(m.text(at));
  }
  FAIL("no entry " << id << " in " << m.line());
  return {};
}

int64_t mock_count(MockLlm& mock, std::string_view what) {
  Message stats(http_get(mock.url(), "/_mock/stats"));
  auto pointer = "/counts/" + std::string(what);
  return stats.has(pointer) ? stats.integer(pointer) : 0;
}

// A loopback port nothing listens on (for a proxy that is down, then comes up there).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// `-c` flags for a provider llmx does not know (so its wire is `auto`) at the mock's URL.
std::vector<std::string> proxy_flags(const std::string& url) {
  return {"-c", "model_provider=proxy", "-c", "model_providers.proxy.name=Proxy", "-c",
          "model_providers.proxy.base_url=" + url, "-c", "model_providers.proxy.env_key=LLMX_API_KEY"};
}

}  // namespace

TEST_CASE("models: model/list and llmx models show what the proxy serves, with LiteLLM's details, from a cache") {
  AppServerFixture f;
  f.initialize();
  auto r = f.call("model/list", "{}");
  INFO(r.line());
  REQUIRE_FALSE(r.is_error());
  CHECK(r.str("/result/source") == "provider");
  CHECK_FALSE(r.has("/result/note"));
  CHECK(ids_of(r, "/result/data") == std::vector<std::string>{"anthropic/claude-sonnet-4-20250514", "mock-model",
                                                               "mock-vision", "mock-reasoner", "claude-mock",
                                                               "mock-tiny"});
  auto configured = entry(r, "/result/data", "anthropic/claude-sonnet-4-20250514");
  CHECK(configured.boolean("/isDefault"));
  CHECK(contains(configured.str("/description"), "does not list it"));
  auto vision = entry(r, "/result/data", "mock-vision");
  CHECK(vision.integer("/contextWindow") == 128000);
  CHECK(vision.integer("/maxOutputTokens") == 8192);
  CHECK(vision.text("/inputModalities") == R"(["text","image"])");
  CHECK_FALSE(vision.boolean("/supportsReasoning"));
  CHECK(array_size(vision, "/supportedReasoningEfforts") == 0);
  auto reasoner = entry(r, "/result/data", "mock-reasoner");
  CHECK(reasoner.boolean("/supportsReasoning"));
  CHECK(array_size(reasoner, "/supportedReasoningEfforts") == 4);
  CHECK(entry(r, "/result/data", "claude-mock").boolean("/supportsPromptCaching"));
  // A load-balanced name (a 128K deployment and a 64K Azure one) is as small as its smallest.
  CHECK(entry(r, "/result/data", "mock-model").integer("/contextWindow") == 64000);
  CHECK(entry(r, "/result/data", "mock-model").integer("/maxOutputTokens") == 4096);
  // Answered from the cache: the proxy was asked once.
  auto again = f.call("model/list", R"({"limit":2,"cursor":"1"})");
  CHECK(ids_of(again, "/result/data") == std::vector<std::string>{"mock-model", "mock-vision"});
  CHECK(again.str("/result/nextCursor") == "3");
  CHECK(mock_count(f.mock, "models") == 1);
  CHECK(mock_count(f.mock, "model_info") == 1);

  auto env = llmx_env(f.home.path(), f.mock.url());
  auto human = run_llmx({"-c", "model=mock-tiny", "models"}, env);
  INFO(human.err);
  REQUIRE(human.status.ok());
  CHECK(contains(human.out, "Models of provider `litellm`"));
  CHECK(contains(human.out, "* mock-tiny"));
  CHECK(contains(human.out, "100K"));
  CHECK(contains(human.out, "tools, vision, reasoning, prompt caching"));
  CHECK_FALSE(contains(human.out, "text-embedding-mock"));
  CHECK_FALSE(contains(human.out, "note:"));
  auto json = run_llmx({"models", "--json"}, env);
  REQUIRE(json.status.ok());
  Message j(json.out);
  CHECK(j.str("/provider") == "litellm");
  CHECK(j.str("/source") == "provider");
  CHECK(j.integer("/models/4/context_window") == 100000);
  CHECK(j.str("/models/4/id") == "mock-tiny");
  CHECK(j.str("/models/3/upstream") == "anthropic/claude-mock");
  CHECK(j.str("/models/3/owner") == "anthropic");
}

TEST_CASE("models: a proxy that is down at start gives the built-in table with a note, then its list once up") {
  TempDir home{"llmx-models-down"};
  int port = free_port();
  auto url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  McpOptions options = app_server_options();
  options.args = {"-c", "model_providers.litellm.models_cache_ttl_secs=1"};
  McpClient c(home.path(), url, options);
  c.wait_for_response(c.request("initialize", R"({"clientInfo":{"name":"t","version":"1"}})"));
  auto down = c.wait_for_response(c.request("model/list", "{}"));
  INFO(down.line());
  CHECK(down.str("/result/source") == "builtin");
  CHECK(contains(down.str("/result/note"), "model list is unavailable"));
  CHECK(contains(down.str("/result/note"), "Failed to connect"));
  CHECK(ids_of(down, "/result/data") ==
        std::vector<std::string>{"anthropic/claude-sonnet-4-20250514", "gpt-5-llmx", "gpt-5"});
  auto cli = run_llmx({"models"}, llmx_env(home.path(), url));
  CHECK(cli.status.ok());
  CHECK(contains(cli.out, "llmx's built-in table"));
  CHECK(contains(cli.out, "note: the provider's model list is unavailable"));
  // The proxy comes up: the next fetch (due after min(ttl, 30 s) = 1 s) brings its list.
  MockLlm mock({"--port", std::to_string(port)});
  std::string source;
  for (int i = 0; i < 50 && source != "provider"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    source = c.wait_for_response(c.request("model/list", "{}")).str("/result/source");
  }
  CHECK(source == "provider");
  auto up = c.wait_for_response(c.request("model/list", "{}"));
  CHECK_FALSE(up.has("/result/note"));
  CHECK(entry(up, "/result/data", "mock-tiny").integer("/contextWindow") == 100000);
}

TEST_CASE("models: a malformed /model/info leaves the list, with a note and without its details") {
  AppServerFixture f({}, {"--model-info", "malformed"});
  f.initialize();
  auto r = f.call("model/list", "{}");
  INFO(r.line());
  CHECK(r.str("/result/source") == "provider");
  CHECK(contains(r.str("/result/note"), "/model/info answer could not be read"));
  auto tiny = entry(r, "/result/data", "mock-tiny");
  CHECK_FALSE(tiny.has("/contextWindow"));
  CHECK_FALSE(tiny.has("/inputModalities"));
  // A proxy that is not LiteLLM (404): the list, with nothing to say about it.
  AppServerFixture plain({}, {"--model-info", "missing"});
  plain.initialize();
  auto p = plain.call("model/list", "{}");
  CHECK(p.str("/result/source") == "provider");
  CHECK_FALSE(p.has("/result/note"));
}

TEST_CASE("models: the MCP server's model/list answers `items` from the same registry") {
  InitializedMcp f;
  auto r = f.mcp.wait_for_response(f.mcp.request("model/list", R"({"pageSize":100})"));
  CHECK(r.str("/result/source") == "provider");
  CHECK(ids_of(r, "/result/items").size() == 6);
  CHECK(entry(r, "/result/items", "claude-mock").integer("/contextWindow") == 200000);
}

TEST_CASE("models: the context window, output limit, images, reasoning effort and cache markers follow the metadata") {
  TempDir home{"llmx-models-meta"};
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  // Auto-compaction at 90% of the real window: mock-tiny's 100000 → 90000.
  auto tiny = run_exec_json({"-m", "mock-tiny"}, "big ZEBRA @mock:text prompt_tokens=95000 prompt_tokens_times=1", env);
  INFO(tiny.problem());
  REQUIRE(tiny.ok());
  bool compacted = false;
  for (auto& e : tiny.events) {
    if (e.str("/msg/type") == "task_started") CHECK(e.integer("/msg/model_context_window") == 100000);
    if (e.str("/msg/type") == "agent_message" && e.str("/msg/message") == "Compact task completed") compacted = true;
  }
  CHECK(compacted);
  auto reqs = recorded_requests(mock);
  CHECK(reqs.integer("/requests/0/max_tokens") == 512);  // the model's own output limit, not 20480
  // The same usage without the provider's word: the table does not know mock-tiny, so no compaction.
  auto blind = run_exec_json({"-m", "mock-tiny", "-c", "model_providers.litellm.model_info=false"},
                             "@mock:text prompt_tokens=95000 prompt_tokens_times=1", env);
  REQUIRE(blind.ok());
  for (auto& e : blind.events) {
    CHECK_FALSE(e.str_or("/msg/message", "") == "Compact task completed");
    if (e.str("/msg/type") == "task_started") CHECK(e.at("/msg/model_context_window").is_null());
  }

  // Images only to a model with vision: refused before anything is sent, with a clear error.
  size_t sent = array_size(recorded_requests(mock), "/requests");
  TempDir work{"llmx-models-img"};
  auto png = work.path() + "/dot.png";
  std::ofstream(png, std::ios::binary) << std::string("\x89PNG\r\n\x1a\n", 8) << "tiny";
  auto refused = run_exec_json({"-m", "mock-model", "-i", png}, "what is this?", env);
  CHECK_FALSE(refused.ok());
  CHECK(contains(refused.raw.err + refused.raw.out, "`mock-model` does not accept images"));
  CHECK(array_size(recorded_requests(mock), "/requests") == sent);
  auto seen = run_exec_json({"-m", "mock-vision", "-i", png}, "what is this? @mock:text", env);
  INFO(seen.problem());
  CHECK(seen.ok());
  auto at = [&](size_t i) { return "/requests/" + std::to_string(sent + i); };
  CHECK(contains(recorded_requests(mock).text(at(0) + "/messages"), "image_url"));

  // Reasoning effort only to a model that reasons; cache markers only to a caching Claude.
  REQUIRE(run_exec_json({"-m", "mock-reasoner", "-c", "model_reasoning_effort=high"}, "@mock:text", env).ok());
  REQUIRE(run_exec_json({"-m", "mock-model", "-c", "model_reasoning_effort=high"}, "@mock:text", env).ok());
  REQUIRE(run_exec_json({"-m", "claude-mock"}, "@mock:text", env).ok());
  auto three = recorded_requests(mock);
  CHECK(three.str(at(1) + "/reasoning_effort") == "high");
  CHECK_FALSE(three.has(at(2) + "/reasoning_effort"));
  CHECK(three.integer(at(2) + "/max_tokens") == 4096);
  CHECK(contains(three.text(at(3) + "/messages"), "cache_control"));
  CHECK_FALSE(contains(three.text(at(2) + "/messages"), "cache_control"));
}

// "one process": the fallback is remembered per process, and on worker nodes each node is one;
// `llmx acp` has no worker nodes. The cluster run of the suite leaves these out.
TEST_CASE("models (one process): a proxy that only speaks Chat: `auto` falls back once, logged once, shown in session_configured") {
  TempDir home{"llmx-models-auto"};
  MockLlm mock({"--refuse-wire", "responses"});
  McpOptions options;
  options.args = proxy_flags(mock.url());
  McpClient mcp(home.path(), mock.url(), options);
  mcp.initialize();
  auto first = mcp.call_llmx("@mock:text words=3");
  auto r1 = mcp.wait_for_response(first);
  INFO(r1.line() << "\n" << mcp.diagnostics());
  REQUIRE_FALSE(result_is_error(r1));
  auto events = mcp.events_for(first);
  auto configured = events_of_type(events, "session_configured");
  REQUIRE(configured.size() == 1);
  CHECK(configured[0].str("/params/msg/wire_api") == "responses");  // not known yet
  auto warnings = events_of_type(events, "warning");
  REQUIRE(warnings.size() == 1);
  CHECK(contains(warnings[0].str("/params/msg/message"), "does not serve the Responses API"));
  CHECK(contains(warnings[0].str("/params/msg/message"), "HTTP 404"));
  CHECK(mock_count(mock, "responses refused") == 1);
  // Every later request of the process goes over Chat straight away, and says so up front.
  auto second = mcp.call_llmx("@mock:text words=2");
  REQUIRE_FALSE(result_is_error(mcp.wait_for_response(second)));
  auto later = events_of_type(mcp.events_for(second), "session_configured");
  REQUIRE(later.size() == 1);
  CHECK(later[0].str("/params/msg/wire_api") == "chat");
  CHECK(contains(later[0].str("/params/msg/wire_api_fallback"), "HTTP 404"));
  CHECK(events_of_type(mcp.events_for(second), "warning").empty());
  CHECK(mock_count(mock, "responses refused") == 1);
  auto reqs = recorded_requests(mock);
  CHECK(array_size(reqs, "/requests") == 2);
  CHECK(reqs.has("/requests/0/messages"));  // Chat bodies
  CHECK(reqs.has("/requests/1/messages"));
  auto log = mcp.process().stderr_so_far();
  size_t logged = 0;
  for (size_t at = 0; (at = log.find("does not serve the Responses API", at)) != std::string::npos; ++at) ++logged;
  CHECK(logged == 1);

  // LiteLLM relaying a Chat-only backend's rejection of a Responses-only field: the same.
  MockLlm strict({"--refuse-wire", "responses", "--refuse-style", "cache-key"});
  auto ex = run_exec_json(proxy_flags(strict.url()), "@mock:text words=2", llmx_env(home.path(), strict.url()));
  INFO(ex.problem());
  CHECK(ex.ok());
  bool warned = false;
  for (auto& e : ex.events)
    warned |= e.str("/msg/type") == "warning" && contains(e.str("/msg/message"), "prompt_cache_key");
  CHECK(warned);
  CHECK(mock_count(strict, "responses refused") == 1);
  // A proxy that speaks Responses keeps it.
  MockLlm both;
  auto fine = run_exec_json(proxy_flags(both.url()), "@mock:text words=2", llmx_env(home.path(), both.url()));
  CHECK(fine.ok());
  CHECK(recorded_requests(both).has("/requests/0/input"));
}

TEST_CASE("models (one process): ACP offers the proxy's models as the session's model option and switches between them") {
  TempDir home{"llmx-models-acp"};
  TempDir work{"llmx-models-acp-work"};
  MockLlm mock;
  McpOptions options;
  options.subcommand = "acp";
  McpClient c(home.path(), mock.url(), options);
  REQUIRE_FALSE(c.wait_for_response(c.request("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})")).is_error());
  auto s = c.wait_for_response(c.request("session/new", R"({"cwd":")" + work.path() + R"(","mcpServers":[]})"));
  INFO(s.line());
  REQUIRE_FALSE(s.is_error());
  auto session = s.str("/result/sessionId");
  CHECK(s.str("/result/configOptions/0/id") == "model");
  CHECK(s.str("/result/configOptions/0/category") == "model");
  CHECK(s.str("/result/configOptions/0/type") == "select");
  CHECK(s.str("/result/configOptions/0/currentValue") == "anthropic/claude-sonnet-4-20250514");
  std::vector<std::string> values;
  for (size_t i = 0; i < array_size(s, "/result/configOptions/0/options"); ++i)
    values.push_back(s.str("/result/configOptions/0/options/" + std::to_string(i) + "/value"));
  CHECK(values == std::vector<std::string>{"anthropic/claude-sonnet-4-20250514", "mock-model", "mock-vision",
                                           "mock-reasoner", "claude-mock", "mock-tiny"});
  auto set = c.wait_for_response(c.request(
      "session/set_config_option", R"({"sessionId":")" + session + R"(","configId":"model","value":"mock-reasoner"})"));
  INFO(set.line());
  CHECK(set.str("/result/configOptions/0/currentValue") == "mock-reasoner");
  auto bad = c.wait_for_response(c.request(
      "session/set_config_option", R"({"sessionId":")" + session + R"(","configId":"model","value":"no-such-model"})"));
  CHECK(bad.integer("/error/code") == -32602);
  auto other = c.wait_for_response(c.request(
      "session/set_config_option", R"({"sessionId":")" + session + R"(","configId":"mode","value":"x"})"));
  CHECK(other.integer("/error/code") == -32602);
  auto p = c.wait_for_response(c.request(
      "session/prompt", R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":"hi @mock:text"}]})"));
  INFO(p.line());
  CHECK(p.str("/result/stopReason") == "end_turn");
  CHECK(recorded_requests(mock).str("/requests/0/model") == "mock-reasoner");
}
