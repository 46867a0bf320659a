// The agent uses the MCP servers its users configure (issue 13), end to end: `llmx mcp-server`
// and `llmx app-server` with `[mcp_servers.*]` in config.toml, mock-llm calling a named tool, and
// the scriptable fake server (fake_mcp_server.mjs) for every way a server goes wrong.
#include <doctest/doctest.h>

#include "actors/engine.hpp"
#include "test/mcp_client/fixture.hpp"
#include "test/support/env_guard.hpp"

using namespace llmx::test;
using namespace llmx::test::mcp_fixture;

TEST_CASE("mcp client: a configured stdio server's tool is offered, called, and reported as begin and end") {
  auto marker = unique_marker("basic");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  auto turn = f.call_tool("mcp__fake__echo", R"({"message":"hi there"})");
  INFO(f.mcp->diagnostics());
  CHECK(result_text(turn.response).find("Tool said: ") != std::string::npos);
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"echo: hi there"}])");

  auto* starting = find_event(turn.events, "mcp_startup_update");
  REQUIRE(starting);
  CHECK(starting->str("/params/msg/status/state") == "starting");
  auto* ready = startup_end(turn.events);
  REQUIRE(ready);
  CHECK(ready->index() > starting->index());
  CHECK(ready->str("/params/msg/server") == "fake");
  CHECK(ready->str("/params/msg/status/state") == "ready");
  CHECK(ready->integer("/params/msg/status/tools") == 10);
  REQUIRE(find_event(turn.events, "mcp_startup_complete"));

  auto* begin = find_event(turn.events, "mcp_tool_call_begin");
  auto* end = find_event(turn.events, "mcp_tool_call_end");
  REQUIRE(begin);
  REQUIRE(end);
  CHECK(begin->str("/params/msg/invocation/server") == "fake");
  CHECK(begin->str("/params/msg/invocation/tool") == "echo");
  CHECK(begin->str("/params/msg/invocation/arguments/message") == "hi there");
  CHECK(end->str("/params/msg/call_id") == begin->str("/params/msg/call_id"));
  CHECK(end->str("/params/msg/result/Ok/content/0/text") == "echo: hi there");
  CHECK(end->has("/params/msg/duration/secs"));

  // The tools went to the model with their qualified names and provider-ready schemas.
  auto requests = recorded_requests(f.mock);
  auto tools = requests.text("/requests/0/tools");
  CHECK(contains(tools, R"("name":"mcp__fake__echo")"));
  CHECK(contains(tools, R"("name":"mcp__fake__huge")"));
  CHECK_FALSE(contains(tools, "$schema"));
}

TEST_CASE("mcp client: every conversation of the process shares one server process") {
  auto marker = unique_marker("shared");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(f.mcp->call_llmx("@mock:tool name=mcp__fake__pid args={}", f.args()));
  std::set<std::string> outputs;
  for (auto& id : ids) {
    auto r = f.mcp->wait_for_response(id, 20s);
    CHECK_FALSE(result_is_error(r));
    for (auto& e : f.mcp->events_for(id))
      if (e.event_type() == "mcp_tool_call_end") outputs.insert(e.text("/params/msg/result/Ok/structuredContent/pid"));
  }
  CHECK(outputs.size() == 1);  // one pid answered all eight
  CHECK(processes_with_argv(fake_argv("ok", marker)).size() == 1);
}

TEST_CASE("mcp client: a server that cannot start is reported and the conversation goes on without it") {
  auto marker = unique_marker("exit");
  Fixture f(fake_server("broken", "exit", marker));
  auto turn = f.call_tool("mcp__broken__echo", R"({"message":"x"})");
  INFO(f.mcp->diagnostics());
  CHECK_FALSE(result_is_error(turn.response));
  CHECK(contains(result_text(turn.response), "The tool mcp__broken__echo was not offered."));
  auto* failed = startup_end(turn.events);
  REQUIRE(failed);
  CHECK(failed->str("/params/msg/status/state") == "failed");
  auto error = failed->str("/params/msg/status/error");
  CHECK(contains(error, "MCP client for `broken` failed to start"));
  CHECK(contains(error, "status 3"));
  CHECK(contains(error, "fake: refusing to start"));
}

TEST_CASE("mcp client: a server that never answers initialize fails after its start-up timeout") {
  auto marker = unique_marker("silent");
  ProcessSweeper sweep{fake_argv("silent", marker)};
  Fixture f(fake_server("mute", "silent", marker, "startup_timeout_sec = 1"));
  auto turn = f.call_tool("mcp__mute__echo");
  auto* failed = startup_end(turn.events);
  REQUIRE(failed);
  CHECK(contains(failed->str("/params/msg/status/error"), "MCP client for `mute` timed out after 1 seconds"));
  // The server that failed is not left running.
  CHECK(wait_until_no_process(fake_argv("silent", marker)));
}

TEST_CASE("mcp client: garbage lines from a server are skipped, its answers still count") {
  auto marker = unique_marker("garbage");
  ProcessSweeper sweep{fake_argv("garbage", marker)};
  Fixture f(fake_server("noisy", "garbage", marker));
  auto turn = f.call_tool("mcp__noisy__echo", R"({"message":"still here"})");
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"echo: still here"}])");
}

TEST_CASE("mcp client: a tool that hangs times out, the server gets notifications/cancelled and lives on") {
  auto marker = unique_marker("timeout");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker, "tool_timeout_sec = 1"));
  auto turn = f.call_tool("mcp__fake__slow");
  auto* end = find_event(turn.events, "mcp_tool_call_end");
  REQUIRE(end);
  CHECK(end->str("/params/msg/result/Err") == "timed out awaiting tools/call after 1s");
  CHECK(f.last_tool_output() == "timed out awaiting tools/call after 1s");
  // The same server answers the next call.
  auto pid_before = processes_with_argv(fake_argv("ok", marker));
  f.call_tool("mcp__fake__echo", R"({"message":"after"})");
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"echo: after"}])");
  CHECK(processes_with_argv(fake_argv("ok", marker)) == pid_before);
}

TEST_CASE("mcp client: a server that dies mid-call fails that call clearly and is started again") {
  auto marker = unique_marker("crash");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  auto turn = f.call_tool("mcp__fake__crash");
  auto* end = find_event(turn.events, "mcp_tool_call_end");
  REQUIRE(end);
  auto err = end->str("/params/msg/result/Err");
  CHECK(contains(err, "MCP server `fake` stopped: the MCP server exited with status 7"));
  CHECK(contains(err, "fake: crashing on purpose"));
  // Restarted after a backoff: a later call works.
  REQUIRE(wait_until_running(fake_argv("ok", marker), 1, 10s));
  f.call_tool("mcp__fake__echo", R"({"message":"back"})");
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"echo: back"}])");
}

TEST_CASE("mcp client: a hung server (no answer to ping after a timeout) is killed and started again") {
  auto marker = unique_marker("hang");
  ProcessSweeper sweep{fake_argv("hang", marker)};
  Fixture f(fake_server("stuck", "hang", marker, "tool_timeout_sec = 1"));
  // The handshake succeeds; then the server stops answering anything.
  auto turn = f.call_tool("mcp__stuck__echo", R"({"message":"x"})", {}, 20s);
  REQUIRE(find_event(turn.events, "mcp_tool_call_end"));
  auto first = processes_with_argv(fake_argv("hang", marker));
  REQUIRE(first.size() == 1);
  // Ping waits 10 s, then the server is replaced by a new process.
  bool replaced = false;
  for (int i = 0; i < 300 && !replaced; ++i) {
    std::this_thread::sleep_for(100ms);
    auto now = processes_with_argv(fake_argv("hang", marker));
    replaced = now.size() == 1 && now != first;
  }
  CHECK(replaced);
}

TEST_CASE("mcp client: 500 tools over five pages are all offered") {
  auto marker = unique_marker("many");
  ProcessSweeper sweep{fake_argv("many", marker)};
  Fixture f(fake_server("big", "many", marker));
  auto turn = f.call_tool("mcp__big__tool_499", R"({"n":7})");
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"tool_499 got {\"n\":7}"}])");
  auto* ready = startup_end(turn.events);
  REQUIRE(ready);
  CHECK(ready->integer("/params/msg/status/tools") == 500);
}

TEST_CASE("mcp client: a 50 MB result is truncated for the model like command output") {
  auto marker = unique_marker("huge");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  f.mcp->drop_lines_containing("mcp_tool_call_end");
  auto turn = f.call_tool("mcp__fake__huge", "{}", {}, 60s);
  // The event carries a cut-down result too: clients and the rollout never see 50 MB.
  CHECK(f.mcp->dropped_lines() == 1);
  CHECK(f.mcp->dropped_bytes() < (2u << 20));
  auto out = f.last_tool_output();
  CHECK(out.size() < 20000);
  CHECK(contains(out, "truncated"));
}

TEST_CASE("mcp client: progress notifications reach the client as events") {
  auto marker = unique_marker("progress");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  auto turn = f.call_tool("mcp__fake__progress");
  std::vector<std::string> messages;
  for (auto& e : turn.events)
    if (e.event_type() == "mcp_tool_call_progress") messages.push_back(e.str("/params/msg/message"));
  CHECK(messages == std::vector<std::string>{"1/3: step 1", "2/3: step 2", "3/3: step 3"});
}

TEST_CASE("mcp client: enabled_tools and disabled_tools decide what the model sees") {
  auto marker = unique_marker("filter");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker, R"(enabled_tools = ["echo", "pid"]
disabled_tools = ["pid"])"));
  auto turn = f.call_tool("mcp__fake__pid");
  CHECK(contains(result_text(turn.response), "The tool mcp__fake__pid was not offered."));
  auto tools = recorded_requests(f.mock).text("/requests/0/tools");
  CHECK(contains(tools, "mcp__fake__echo"));
  CHECK_FALSE(contains(tools, "mcp__fake__image"));
}

TEST_CASE("mcp client: app-server v2 sees an mcpToolCall item start, progress and complete") {
  auto marker = unique_marker("v2");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  AppFixture app(fake_server("fake", "ok", marker));
  auto& c = *app.c;
  auto turn = app.turn("@mock:tool name=mcp__fake__progress args={}");
  REQUIRE_FALSE(turn.is_error());
  auto is_mcp_item = [](const Message& m, std::string_view method) {
    return m.method() == method && m.str_or("/params/item/type", "") == "mcpToolCall";
  };
  auto started = c.wait_for([&](const Message& m) { return is_mcp_item(m, "item/started"); }, "mcpToolCall started");
  CHECK(started.str("/params/item/status") == "inProgress");
  CHECK(started.str("/params/item/server") == "fake");
  CHECK(started.str("/params/item/tool") == "progress");
  CHECK(started.text("/params/item/result") == "null");
  auto completed = c.wait_for([&](const Message& m) { return is_mcp_item(m, "item/completed"); }, "mcpToolCall completed");
  CHECK(completed.str("/params/item/id") == started.str("/params/item/id"));
  CHECK(completed.str("/params/item/status") == "completed");
  CHECK(completed.str("/params/item/result/content/0/text") == "progress done");
  CHECK(completed.text("/params/item/error") == "null");
  CHECK(completed.integer("/params/item/duration_ms") >= 0);
  size_t progress = 0;
  for (auto& m : c.log())
    if (m.method() == "item/mcpToolCall/progress") {
      CHECK(m.str("/params/itemId") == started.str("/params/item/id"));
      ++progress;
    }
  CHECK(progress == 3);
  c.wait_for([](const Message& m) { return m.method() == "turn/completed"; }, "turn/completed");
}

TEST_CASE("mcp client: under untrusted a tool asks unless it is read-only, approved for session covers the tool") {
  auto marker = unique_marker("approve");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  auto untrusted = f.args() + R"(,"approval-policy":"untrusted")";
  // Read-only: no question.
  auto echo = f.call_tool("mcp__fake__echo", R"({"message":"ro"})", untrusted);
  for (auto& m : f.mcp->log()) CHECK(m.method() != "elicitation/create");
  // Not read-only: asked, with the server, the tool and the arguments shown.
  auto id = f.mcp->call_llmx(R"(@mock:tool name=mcp__fake__write args={"what":"a file"})", untrusted);
  auto ask = f.mcp->wait_for([](const Message& m) { return m.method() == "elicitation/create"; }, "approval request");
  CHECK(contains(ask.str("/params/message"), "fake"));
  CHECK(contains(ask.line(), "write"));
  CHECK(contains(ask.line(), "a file"));
  f.mcp->respond(ask.id(), R"({"action":"accept","content":{"decision":"approved_for_session"}})");
  f.mcp->wait_for_response(id);
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"wrote a file"}])");
  // Declined in another conversation: the model hears it was rejected.
  auto id2 = f.mcp->call_llmx(R"(@mock:tool name=mcp__fake__write args={"what":"b"})", untrusted);
  auto ask2 = f.mcp->wait_for(
      [&](const Message& m) { return m.method() == "elicitation/create" && m.index() > ask.index(); }, "second ask");
  f.mcp->respond(ask2.id(), R"({"action":"decline"})");
  f.mcp->wait_for_response(id2);
  CHECK(contains(f.last_tool_output(), "rejected"));
}

TEST_CASE("mcp client: interrupting a turn sends notifications/cancelled for the call in flight") {
  auto marker = unique_marker("cancel");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  TempDir logs{"llmx-mcpc-log"};
  auto log_path = (fs::path(logs.path()) / "methods.log").string();
  Fixture f(fake_server("fake", "ok", marker, "env = { FAKE_MCP_LOG = " + json_quote(log_path) + " }"));
  auto id = f.mcp->call_llmx("@mock:tool name=mcp__fake__slow args={}", f.args());
  f.mcp->wait_for([&](const Message& m) { return m.is_event() && m.event_type() == "mcp_tool_call_begin"; },
                  "mcp_tool_call_begin");
  f.mcp->notify("notifications/cancelled", R"({"requestId":)" + id + "}");
  bool cancelled = false;
  for (int i = 0; i < 100 && !cancelled; ++i) {
    std::this_thread::sleep_for(50ms);
    cancelled = contains(read_file(log_path), "notifications/cancelled");
  }
  CHECK(cancelled);
}

TEST_CASE("mcp client: a server's elicitation reaches the MCP host with its form, and the answer goes back") {
  auto marker = unique_marker("elicit");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  auto id = f.mcp->call_llmx("@mock:tool name=mcp__fake__elicit args={}", f.args());
  auto ask = f.mcp->wait_for([](const Message& m) { return m.method() == "elicitation/create"; }, "forwarded elicitation");
  CHECK(contains(ask.str("/params/message"), "What is your name?"));
  CHECK(contains(ask.str("/params/message"), "fake"));
  CHECK(ask.str("/params/requestedSchema/properties/name/type") == "string");
  CHECK(ask.str("/params/llmx_elicitation") == "mcp-elicitation");
  f.mcp->respond(ask.id(), R"({"action":"accept","content":{"name":"Ada"}})");
  f.mcp->wait_for_response(id);
  CHECK(f.last_tool_output() == R"([{"type":"text","text":"user said: {\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}"}])");
}

TEST_CASE("mcp client: an app-server client gets mcpServer/elicitation/request, a decline goes back") {
  auto marker = unique_marker("elicit-app");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  AppFixture app(fake_server("fake", "ok", marker));
  auto& c = *app.c;
  app.turn("@mock:tool name=mcp__fake__elicit args={}");
  auto ask = c.wait_for([](const Message& m) { return m.method() == "mcpServer/elicitation/request"; }, "elicitation request");
  CHECK(ask.str("/params/threadId") == app.thread);
  CHECK(ask.str("/params/serverName") == "fake");
  CHECK(ask.str("/params/message") == "What is your name?");
  c.respond(ask.id(), R"({"action":"decline"})");
  c.wait_for([](const Message& m) { return m.method() == "turn/completed"; }, "turn/completed");
  auto outputs = tool_messages(recorded_requests(app.mock));
  REQUIRE_FALSE(outputs.empty());
  CHECK(contains(outputs.back(), R"(user said: {\"action\":\"decline\"})"));
}

TEST_CASE("mcp client: under llmx exec nobody can answer, so a server's elicitation is declined") {
  auto marker = unique_marker("elicit-exec");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  TempDir home{"llmx-mcpc-exec"};
  TempDir ws{"llmx-mcpc-exec-ws"};
  std::ofstream(fs::path(home.path()) / "config.toml") << fake_server("fake", "ok", marker);
  MockLlm mock;
  auto run = run_exec_json({}, "@mock:tool name=mcp__fake__elicit args={}",
                           llmx_env(home.path(), mock.url()), kDefaultTimeout, ws.path());
  INFO(run.problem());
  auto outputs = tool_messages(recorded_requests(mock));
  REQUIRE_FALSE(outputs.empty());
  CHECK(contains(outputs.back(), R"(user said: {\"action\":\"decline\"})"));
}


TEST_CASE("mcp client: notifications/tools/list_changed brings a new tool to the next turn") {
  auto marker = unique_marker("grow");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  Fixture f(fake_server("fake", "ok", marker));
  auto first = f.call_tool("mcp__fake__extra");
  CHECK(contains(result_text(first.response), "The tool mcp__fake__extra was not offered."));
  f.call_tool("mcp__fake__grow");
  CHECK(contains(f.last_tool_output(), "grown"));
  // The listing after list_changed is asynchronous: the next turns see the tool once it is done.
  bool offered = false;
  for (int i = 0; i < 20 && !offered; ++i) {
    auto turn = f.call_tool("mcp__fake__extra");
    offered = !contains(result_text(turn.response), "was not offered");
    if (!offered) std::this_thread::sleep_for(100ms);
  }
  REQUIRE(offered);
  CHECK(contains(f.last_tool_output(), "extra ran"));
}

TEST_CASE("mcp client: list_mcp_tools (an embedding host's op) answers every offered tool by its qualified name") {
  auto marker = unique_marker("list");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  TempDir home{"llmx-mcpc-list"};
  EnvGuard llmx_home("LLMX_HOME", home.path());
  caf::actor_system_config cfg;
  llmx::configure_system(cfg);
  caf::actor_system sys{cfg};
  auto engine = llmx::start_engine(sys);
  caf::scoped_actor self{sys};
  auto config = llmx::load_config({});
  llmx::McpServerConfig server;
  server.command = NODE_BIN;
  server.args = {FAKE_MCP_SERVER, "ok", marker};
  config.mcp_servers["fake"] = server;
  std::optional<llmx::conversation_actor> conv;
  self->request(engine.manager, std::chrono::seconds(10), llmx::new_conv_atom::value, config)
      .receive([&](llmx::conversation_actor c, llmx::SessionConfiguredEvent&) { conv = c; }, [](caf::error&) {});
  REQUIRE(conv);
  self->send(*conv, llmx::subscribe_atom::value, caf::actor_cast<llmx::event_sink_actor>(self));
  self->send(*conv, llmx::submit_atom::value, llmx::Submission{"", llmx::ListMcpToolsOp{}});
  std::optional<llmx::McpListToolsResponseEvent> listing;
  bool timed_out = false;
  self->receive_while([&] { return !listing && !timed_out; })(
      [&](llmx::ConversationEvents& batch) {
        for (auto& ev : batch.events)
          if (auto* l = ev.msg.get_if<llmx::McpListToolsResponseEvent>()) listing = *l;
      },
      [&](const caf::message&) {}, caf::after(std::chrono::seconds(15)) >> [&] { timed_out = true; });
  REQUIRE(listing);
  REQUIRE(listing->tools.count("mcp__fake__echo"));
  CHECK(contains(listing->tools["mcp__fake__echo"].text, R"("name":"echo")"));
  CHECK(contains(listing->tools["mcp__fake__echo"].text, R"("inputSchema":)"));
  CHECK(listing->tools.size() == 10);
  CHECK(listing->auth_statuses["fake"] == "unsupported");
  self->request(engine.manager, std::chrono::seconds(10), llmx::shutdown_atom::value).receive([](bool) {}, [](caf::error&) {});
}

TEST_CASE("mcp client: llmx mcp list connects and shows each server's state, --tools lists what the model sees") {
  auto marker = unique_marker("cli");
  ProcessSweeper sweep{fake_argv("ok", marker)};
  TempDir home{"llmx-mcpc-cli"};
  std::ofstream(fs::path(home.path()) / "config.toml")
      << fake_server("good", "ok", marker) << fake_server("bad", "exit", marker)
      << fake_server("off", "ok", marker, "enabled = false");
  EnvVars env{{"LLMX_HOME", home.path()}};
  auto table = run_llmx({"mcp", "list", "--tools"}, env, 30s);
  INFO(table.out << table.err);
  REQUIRE(table.status.ok());
  CHECK(contains(table.out, "ready (10 tools)"));
  CHECK(contains(table.out, "failed: MCP client for `bad` failed to start"));
  CHECK(contains(table.out, "disabled"));
  CHECK(contains(table.out, "mcp__good__echo"));
  CHECK(contains(table.out, "Echoes its message."));
  auto json = run_llmx({"mcp", "list", "--json", "--tools"}, env, 30s);
  REQUIRE(json.status.ok());
  Message list(json.out);
  CHECK(list.str("/0/name") == "bad");
  CHECK(list.str("/0/startup/state") == "failed");
  CHECK(list.str("/1/startup/state") == "ready");
  CHECK(list.integer("/1/startup/tools") == 10);
  CHECK(list.str("/1/tools/mcp__good__echo/name") == "echo");
  CHECK(list.str("/2/startup/state") == "disabled");
  // The servers it started are stopped when it exits.
  CHECK(wait_until_no_process(fake_argv("ok", marker)));
}
