// Shared by the MCP client suites: config.toml tables for the scriptable fake server
// (fake_mcp_server.mjs), an `llmx mcp-server` or `llmx app-server` configured with them, and
// ways to find the events a turn produced.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "test/support/harness.hpp"

namespace llmx::test::mcp_fixture {

using namespace std::chrono_literals;
namespace fs = std::filesystem;


// `[mcp_servers.<name>]` running the fake server in `mode`; `marker` makes its command line
// unique to the test (process counting), `extra` adds TOML lines to the table.
inline std::string fake_server(const std::string& name, const std::string& mode, const std::string& marker,
                        const std::string& extra = {}) {
  return "[mcp_servers." + name + "]\ncommand = " + json_quote(NODE_BIN) + "\nargs = [" + json_quote(FAKE_MCP_SERVER) +
         ", " + json_quote(mode) + ", " + json_quote(marker) + "]\n" + extra + "\n";
}

inline std::vector<std::string> fake_argv(const std::string& mode, const std::string& marker) {
  return {NODE_BIN, FAKE_MCP_SERVER, mode, marker};
}

inline std::string unique_marker(std::string_view test) {
  static int n = 0;
  return std::string(test) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

// An `llmx mcp-server` whose config.toml configures `servers`.
struct Fixture {
  TempDir home{"llmx-mcpc"};
  TempDir ws{"llmx-mcpc-ws"};
  MockLlm mock;
  std::unique_ptr<McpClient> mcp;

  explicit Fixture(const std::string& servers, McpOptions options = {}) {
    std::ofstream(fs::path(home.path()) / "config.toml") << servers;
    mcp = std::make_unique<McpClient>(home.path(), mock.url(), std::move(options));
    mcp->initialize();
  }

  std::string args() const { return R"("sandbox":"workspace-write","cwd":)" + json_quote(ws.path()); }

  // One `llmx` tool call whose prompt makes the model call `tool` with `arguments`; returns its
  // response (after the turn ended) and the events it produced.
  struct Turn {
    Message response;
    std::vector<Message> events;
  };
  Turn call_tool(const std::string& tool, const std::string& arguments = "{}", const std::string& extra = {},
                 Duration timeout = kDefaultTimeout) {
    auto id = mcp->call_llmx("@mock:tool name=" + tool + " args=" + arguments, extra.empty() ? args() : extra);
    auto response = mcp->wait_for_response(id, timeout);
    return {response, mcp->events_for(id)};
  }
  std::string last_tool_output() {
    auto outputs = tool_messages(recorded_requests(mock));
    REQUIRE_FALSE(outputs.empty());
    return outputs.back();
  }
};

// An `llmx app-server` whose config.toml configures `servers`, initialized, with one thread.
struct AppFixture {
  TempDir home{"llmx-mcpc-app"};
  MockLlm mock;
  std::unique_ptr<McpClient> c;
  std::string thread;

  explicit AppFixture(const std::string& servers) {
    std::ofstream(fs::path(home.path()) / "config.toml") << servers;
    c = std::make_unique<McpClient>(home.path(), mock.url(), app_server_options());
    c->wait_for_response(c->request("initialize", R"({"clientInfo":{"name":"tests","version":"1.0"}})"));
    thread = c->wait_for_response(c->request("thread/start", "{}")).str("/result/thread/id");
  }
  // turn/start with one text input; returns its response.
  Message turn(const std::string& text) {
    return c->wait_for_response(c->request(
        "turn/start", R"({"threadId":")" + thread + R"(","input":[{"type":"text","text":)" + json_quote(text) + "}]}"));
  }
};

inline const Message* find_event(const std::vector<Message>& events, std::string_view type) {
  for (const auto& e : events)
    if (e.event_type() == type) return &e;
  return nullptr;
}

// How the first task reports a server's start-up: `starting`, then the update that ends it.
inline const Message* startup_end(const std::vector<Message>& events) {
  for (const auto& e : events)
    if (e.event_type() == "mcp_startup_update" && e.str("/params/msg/status/state") != "starting") return &e;
  return nullptr;
}


}  // namespace llmx::test::mcp_fixture
