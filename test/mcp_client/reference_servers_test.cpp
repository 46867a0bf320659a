// The MCP client against the npm registry's reference servers (issue 13): server-everything over
// stdio and Streamable HTTP, server-filesystem; HTTP start-up failures; and the optional file
// tools of DECISIONS E9 through the same tool path.
#include <doctest/doctest.h>

#include "test/mcp_client/fixture.hpp"

using namespace llmx::test;
using namespace llmx::test::mcp_fixture;

// --- the npm registry's reference servers ---------------------------------------------------------

namespace {

std::string everything_js() { return std::string(NODE_MODULES) + "/@modelcontextprotocol/server-everything/dist/index.js"; }

std::string everything_stdio(const std::string& name) {
  return "[mcp_servers." + name + "]\ncommand = " + json_quote(NODE_BIN) + "\nargs = [" + json_quote(everything_js()) +
         ", \"stdio\"]\n";
}

// server-everything over Streamable HTTP on a free loopback port.
struct EverythingHttp {
  int port = closed_port();
  ChildProcess proc{SpawnOptions{{NODE_BIN, "--import", LOOPBACK_ONLY, everything_js(), "streamableHttp"},
                                 {{"PORT", std::to_string(port)}}}};
  EverythingHttp() {
    for (int i = 0; i < 200; ++i) {
      if (contains(proc.stderr_so_far(), "listening")) return;
      std::this_thread::sleep_for(50ms);
    }
    throw std::runtime_error("server-everything did not start: " + proc.stderr_so_far());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/mcp"; }
};


}  // namespace

TEST_CASE("mcp client: server-everything over stdio — text, image, structured content, progress, resources") {
  Fixture f(everything_stdio("everything"));
  auto echo = f.call_tool("mcp__everything__echo", R"({"message":"from llmx"})", {}, 30s);
  INFO(f.mcp->diagnostics());
  CHECK(contains(f.last_tool_output(), "Echo: from llmx"));

  auto image = f.call_tool("mcp__everything__get-tiny-image", "{}");
  auto* end = find_event(image.events, "mcp_tool_call_end");
  REQUIRE(end);
  CHECK(contains(end->line(), R"("type":"image")"));
  CHECK(contains(f.last_tool_output(), "image/png"));

  f.call_tool("mcp__everything__get-structured-content", R"({"location":"Chicago"})");
  auto structured = f.last_tool_output();
  CHECK(structured.front() == '{');  // structuredContent, not the content blocks
  CHECK(contains(structured, "temperature"));

  auto slow = f.call_tool("mcp__everything__trigger-long-running-operation", R"({"duration":1,"steps":3})", {}, 30s);
  size_t progress = 0;
  for (auto& e : slow.events) progress += e.event_type() == "mcp_tool_call_progress";
  CHECK(progress >= 3);

  f.call_tool("mcp__everything__get-resource-reference", R"({"resourceType":"Text","resourceId":1})");
  CHECK(contains(f.last_tool_output(), R"("type":"resource")"));
}

TEST_CASE("mcp client: server-everything over Streamable HTTP — session, answers as SSE, progress") {
  EverythingHttp server;
  Fixture f("[mcp_servers.web]\nurl = " + json_quote(server.url()) + "\n");
  auto echo = f.call_tool("mcp__web__echo", R"({"message":"over http"})", {}, 30s);
  INFO(f.mcp->diagnostics() << "\nserver: " << server.proc.stderr_so_far());
  auto* ready = startup_end(echo.events);
  REQUIRE(ready);
  CHECK(ready->str("/params/msg/status/state") == "ready");
  CHECK(contains(f.last_tool_output(), "Echo: over http"));
  auto slow = f.call_tool("mcp__web__trigger-long-running-operation", R"({"duration":1,"steps":2})", {}, 30s);
  size_t progress = 0;
  for (auto& e : slow.events) progress += e.event_type() == "mcp_tool_call_progress";
  CHECK(progress >= 2);
  f.call_tool("mcp__web__get-sum", R"({"a":2,"b":40})");
  CHECK(contains(f.last_tool_output(), "42"));
}

TEST_CASE("mcp client: an HTTP server that is not there fails its start-up with the reason") {
  Fixture f("[mcp_servers.gone]\nurl = \"http://127.0.0.1:" + std::to_string(closed_port()) + "/mcp\"\n");
  auto turn = f.call_tool("mcp__gone__echo");
  auto* failed = startup_end(turn.events);
  REQUIRE(failed);
  CHECK(failed->str("/params/msg/status/state") == "failed");
  CHECK(contains(failed->str("/params/msg/status/error"), "MCP client for `gone` failed to start"));
}

TEST_CASE("mcp client: a bearer token variable that is not set fails the server, naming the variable") {
  Fixture f("[mcp_servers.auth]\nurl = \"http://127.0.0.1:1/mcp\"\nbearer_token_env_var = \"LLMX_TEST_NO_SUCH_TOKEN\"\n");
  auto turn = f.call_tool("mcp__auth__echo");
  auto* failed = startup_end(turn.events);
  REQUIRE(failed);
  CHECK(contains(failed->str("/params/msg/status/error"), "LLMX_TEST_NO_SUCH_TOKEN"));
}

TEST_CASE("mcp client: server-filesystem reads the workspace it is given") {
  TempDir files{"llmx-mcpc-fs"};
  std::ofstream(fs::path(files.path()) / "notes.txt") << "remember the milk\n";
  auto fs_js = std::string(NODE_MODULES) + "/@modelcontextprotocol/server-filesystem/dist/index.js";
  Fixture f("[mcp_servers.files]\ncommand = " + json_quote(NODE_BIN) + "\nargs = [" + json_quote(fs_js) + ", " +
            json_quote(files.path()) + "]\n");
  auto path = (fs::path(files.path()) / "notes.txt").string();
  f.call_tool("mcp__files__read_text_file", R"({"path":)" + json_quote(path) + "}", {}, 30s);
  INFO(f.mcp->diagnostics());
  CHECK(contains(f.last_tool_output(), "remember the milk"));
  f.call_tool("mcp__files__list_directory", R"({"path":)" + json_quote(files.path()) + "}");
  CHECK(contains(f.last_tool_output(), "notes.txt"));
}

// --- the optional file tools (DECISIONS E9), through the same tool path --------------------------

TEST_CASE("file tools: off by default, with [tools] flags the model reads, lists and greps the workspace") {
  {
    Fixture plain("");
    plain.call_tool("read_file", "{}");
    auto tools = recorded_requests(plain.mock).text("/requests/0/tools");
    CHECK_FALSE(contains(tools, R"("name":"read_file")"));
    CHECK_FALSE(contains(tools, R"("name":"grep_files")"));
  }
  Fixture f("[tools]\nread_file = true\nlist_dir = true\ngrep_files = true\n");
  std::ofstream(fs::path(f.ws.path()) / "main.py") << "def main():\n    print('needle')\n";
  fs::create_directories(fs::path(f.ws.path()) / "pkg");
  std::ofstream(fs::path(f.ws.path()) / "pkg" / "other.py") << "x = 1\n";
  auto file = (fs::path(f.ws.path()) / "main.py").string();
  f.call_tool("read_file", R"({"file_path":)" + json_quote(file) + "}");
  CHECK(f.last_tool_output() == "L1: def main():\nL2:     print('needle')");
  f.call_tool("list_dir", R"({"dir_path":)" + json_quote(f.ws.path()) + "}");
  CHECK(f.last_tool_output() == "Absolute path: " + f.ws.path() + "\nmain.py\npkg/\n  other.py");
  f.call_tool("grep_files", R"({"pattern":"needle"})");
  CHECK(f.last_tool_output() == file);
  f.call_tool("grep_files", R"({"pattern":"nothing-matches-this"})");
  CHECK(f.last_tool_output() == "No matches found.");
}
