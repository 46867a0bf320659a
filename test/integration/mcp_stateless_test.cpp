// MCP 2026-07-28 on the raw wire (issue 16 point 3): no initialize; every request carries its
// version and capabilities in `_meta`; results say their resultType and serverInfo; approvals
// come back as input_required with a sealed requestState (never a request on stdout); the tasks
// extension runs a call as a task; llmx-reply resumes a stored conversation after a restart.
#include <doctest/doctest.h>

#include <filesystem>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kElicit = R"({"elicitation":{}})";
constexpr std::string_view kTasks = R"({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}})";

std::string meta(std::string_view caps, std::string_view version = "2026-07-28") {
  return R"({"io.modelcontextprotocol/protocolVersion":)" + json_quote(version) +
         R"(,"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":)" +
         std::string(caps) + "}";
}

struct Stateless : McpServerFixture {
  TempDir ws{"llmx-stateless-ws"};
  // A request with 2026 `_meta` (params: JSON object text without braces, may be empty).
  Message call(std::string_view method, std::string_view params = {}, std::string_view caps = kElicit) {
    std::string p = "{" + std::string(params) + (params.empty() ? "" : ",") + R"("_meta":)" + meta(caps) + "}";
    return mcp.wait_for_response(mcp.request(method, p));
  }
  std::string llmx_args(std::string_view prompt, bool untrusted = false) {
    std::string a = R"("name":"llmx","arguments":{"prompt":)" + json_quote(prompt);
    if (untrusted)
      a += R"(,"sandbox":"workspace-write","approval-policy":"untrusted","cwd":)" + json_quote(ws.path());
    return a + "}";
  }
  size_t requests_from_server() const {
    size_t n = 0;
    for (const auto& m : mcp.log()) n += m.is_request();
    return n;
  }
};

constexpr std::string_view kServerInfo = "/result/_meta/io.modelcontextprotocol~1serverInfo/name";

}  // namespace

TEST_CASE("mcp 2026: server/discover without a handshake") {
  Stateless f;
  auto d = f.call("server/discover");
  REQUIRE_FALSE(d.is_error());
  CHECK(d.str("/result/resultType") == "complete");
  CHECK(d.str(kServerInfo) == "llmx-mcp-server");
  CHECK(d.text("/result/supportedVersions").find("\"2026-07-28\"") != std::string::npos);
  CHECK(d.has("/result/capabilities/tools"));
  CHECK(d.has("/result/capabilities/extensions/io.modelcontextprotocol~1tasks"));
  CHECK(d.integer("/result/ttlMs") > 0);
  CHECK(d.str("/result/cacheScope") == "public");
  CHECK_FALSE(d.str("/result/instructions").empty());
  auto tools = f.call("tools/list");
  CHECK(tools.str("/result/resultType") == "complete");
  CHECK(array_size(tools, "/result/tools") == 2);
  CHECK(tools.str("/result/cacheScope") == "public");
  CHECK(tools.str(kServerInfo) == "llmx-mcp-server");
}

TEST_CASE("mcp 2026: _meta is checked, unknown versions get -32022 and removed methods -32601") {
  Stateless f;
  auto no_caps = f.mcp.wait_for_response(f.mcp.request(
      "server/discover", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})"));
  REQUIRE(no_caps.is_error());
  CHECK(no_caps.integer("/error/code") == -32602);
  auto bad_type = f.mcp.wait_for_response(f.mcp.request(
      "tools/list", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}})"));
  CHECK(bad_type.integer("/error/code") == -32602);
  auto old = f.mcp.wait_for_response(f.mcp.request("tools/list", R"({"_meta":)" + meta("{}", "1999-01-01") + "}"));
  REQUIRE(old.is_error());
  CHECK(old.integer("/error/code") == -32022);
  CHECK(old.str("/error/data/requested") == "1999-01-01");
  CHECK(old.text("/error/data/supported").find("\"2026-07-28\"") != std::string::npos);
  for (const char* removed : {"initialize", "ping", "logging/setLevel", "tasks/result", "tasks/list", "resources/list",
                              "prompts/list", "completion/complete", "resources/subscribe"}) {
    CAPTURE(removed);
    auto r = f.call(removed);
    REQUIRE(r.is_error());
    CHECK(r.integer("/error/code") == -32601);
  }
  // The session is still fine for a 2025 client on the same connection.
  CHECK(f.mcp.initialize("2025-11-25").str("/result/protocolVersion") == "2025-11-25");
}

TEST_CASE("mcp 2026: a call answers its result, with nothing but the reply on stdout") {
  Stateless f;
  auto r = f.call("tools/call", f.llmx_args("@mock:echo stateless"));
  REQUIRE_FALSE(r.is_error());
  CHECK(r.str("/result/resultType") == "complete");
  CHECK(r.str(kServerInfo) == "llmx-mcp-server");
  CHECK(result_text(r) == "echo: stateless");
  CHECK(r.str("/result/structuredContent/threadId").size() == 36);
  f.mcp.drain(100ms);
  for (const auto& m : f.mcp.log()) CHECK_FALSE(m.method() == "llmx/event");
  CHECK(f.requests_from_server() == 0);
  auto unknown = f.call("tools/call", R"("name":"shell","arguments":{})");
  CHECK(unknown.integer("/error/code") == -32602);
}

TEST_CASE("mcp 2026: bad arguments are the tool's error for a plain call, a request error for a task") {
  Stateless f;
  auto plain = f.call("tools/call", R"("name":"llmx","arguments":{})");
  REQUIRE_FALSE(plain.is_error());
  CHECK(plain.str("/result/resultType") == "complete");
  CHECK(plain.boolean("/result/isError"));
  CHECK(contains(plain.str("/result/content/0/text"), "prompt"));
  auto task = f.call("tools/call", R"("name":"llmx","arguments":{})", kTasks);
  REQUIRE(task.is_error());
  CHECK(task.integer("/error/code") == -32602);
}

TEST_CASE("mcp 2026: an approval is an input_required result, answered by calling again with requestState") {
  Stateless f;
  auto args = f.llmx_args("@mock:shell cmd=touch mrtr.txt", true);
  auto first = f.call("tools/call", args);
  REQUIRE_FALSE(first.is_error());
  CHECK(first.str("/result/resultType") == "input_required");
  auto state = first.str("/result/requestState");
  CHECK_FALSE(state.empty());
  auto requests = first.at("/result/inputRequests").get_object().value_unsafe();
  REQUIRE(requests.size() == 1);
  std::string key(requests.begin().key());
  CHECK(first.str("/result/inputRequests/" + key + "/method") == "elicitation/create");
  CHECK(first.str("/result/inputRequests/" + key + "/params/mode") == "form");
  CHECK(first.str("/result/inputRequests/" + key + "/params/message").find("touch mrtr.txt") != std::string::npos);
  CHECK(f.requests_from_server() == 0);  // never a request on stdout
  CHECK_FALSE(fs::exists(fs::path(f.ws.path()) / "mrtr.txt"));

  // A forged or altered state, or the state with another call, is refused.
  auto forged = f.call("tools/call", args + R"(,"requestState":"e30=.AAAA")");
  CHECK(forged.integer("/error/code") == -32602);
  auto tampered = state;
  tampered[2] = tampered[2] == 'A' ? 'B' : 'A';
  CHECK(f.call("tools/call", args + R"(,"requestState":)" + json_quote(tampered)).integer("/error/code") == -32602);
  auto other = f.llmx_args("@mock:shell cmd=touch other.txt", true);
  CHECK(f.call("tools/call", other + R"(,"requestState":)" + json_quote(state)).integer("/error/code") == -32602);

  auto answers = R"(,"inputResponses":{")" + key + R"(":{"action":"accept","content":{"decision":"approved"}}})";
  auto done = f.call("tools/call", args + answers + R"(,"requestState":)" + json_quote(state));
  REQUIRE_FALSE(done.is_error());
  CHECK(done.str("/result/resultType") == "complete");
  CHECK_FALSE(result_is_error(done));
  CHECK(fs::exists(fs::path(f.ws.path()) / "mrtr.txt"));
}

TEST_CASE("mcp 2026: a client that cannot answer an approval gets -32021") {
  Stateless f;
  auto r = f.call("tools/call", f.llmx_args("@mock:shell cmd=touch never.txt", true), "{}");
  REQUIRE(r.is_error());
  CHECK(r.integer("/error/code") == -32021);
  CHECK(r.has("/error/data/requiredCapabilities/elicitation"));
  CHECK_FALSE(fs::exists(fs::path(f.ws.path()) / "never.txt"));
  CHECK(f.requests_from_server() == 0);
}

TEST_CASE("mcp 2026: with the tasks extension a call is a task, polled, answered through tasks/update") {
  Stateless f;
  auto created = f.call("tools/call", f.llmx_args("@mock:shell cmd=touch tasked.txt", true), kTasks);
  REQUIRE_FALSE(created.is_error());
  CHECK(created.str("/result/resultType") == "task");
  auto id = created.str("/result/taskId");
  CHECK(id.size() == 36);
  CHECK(created.integer("/result/ttlMs") > 0);
  CHECK(created.integer("/result/pollIntervalMs") > 0);
  CHECK_FALSE(created.has("/result/task"));  // flat, not 2025's {task: ...}

  auto task_params = R"("taskId":)" + json_quote(id);
  auto poll = [&](std::string_view until) {
    for (int i = 0; i < 500; ++i) {
      auto got = f.call("tasks/get", task_params, kTasks);
      REQUIRE_FALSE(got.is_error());
      if (got.str("/result/status") == until) return got;
      std::this_thread::sleep_for(10ms);
    }
    FAIL("status never became " << until);
    return Message("{}");
  };
  auto asking = poll("input_required");
  CHECK(asking.str("/result/resultType") == "complete");
  auto requests = asking.at("/result/inputRequests").get_object().value_unsafe();
  REQUIRE(requests.size() == 1);
  std::string key(requests.begin().key());
  auto ack = f.call("tasks/update",
                    task_params + R"(,"inputResponses":{")" + key + R"(":{"action":"accept","content":{"decision":"approved"}}})",
                    kTasks);
  REQUIRE_FALSE(ack.is_error());
  CHECK(ack.str("/result/resultType") == "complete");
  auto done = poll("completed");
  CHECK(done.str("/result/result/structuredContent/threadId").size() == 36);
  CHECK(fs::exists(fs::path(f.ws.path()) / "tasked.txt"));
  CHECK(f.requests_from_server() == 0);

  // The extension's methods need the extension; unknown ids are -32602; cancel is acknowledged.
  CHECK(f.call("tasks/get", task_params, kElicit).integer("/error/code") == -32021);
  CHECK(f.call("tasks/get", R"("taskId":"00000000-0000-4000-8000-000000000000")", kTasks).integer("/error/code") == -32602);
  CHECK(f.call("tasks/cancel", task_params, kTasks).str("/result/resultType") == "complete");
}

TEST_CASE("mcp 2026: llmx-reply resumes a stored conversation after the server restarted") {
  TempDir home{"llmx-stateless-home"};
  MockLlm mock;
  std::string thread;
  {
    McpClient first(home.path(), mock.url());
    auto r = first.wait_for_response(first.request(
        "tools/call", R"({"name":"llmx","arguments":{"prompt":"@mock:echo remember me"},"_meta":)" + meta("{}") + "}"));
    thread = r.str("/result/structuredContent/threadId");
    first.close_stdin();
    first.wait_exit();
  }
  McpClient second(home.path(), mock.url());
  auto r = second.wait_for_response(second.request(
      "tools/call", R"({"name":"llmx-reply","arguments":{"conversationId":")" + thread +
                        R"(","prompt":"@mock:echo again"},"_meta":)" + meta("{}") + "}"));
  REQUIRE_FALSE(r.is_error());
  CHECK(result_text(r) == "echo: again");
  CHECK(r.str("/result/structuredContent/threadId") == thread);
  // The model saw the earlier turn: the history came back from the rollout.
  CHECK(mock.requests_json().find("remember me") != std::string::npos);
}

TEST_CASE("mcp 2026: a cancelled call gets no reply, stray answers are refused, tasks stay in their revision") {
  Stateless f;
  auto slow = f.mcp.request("tools/call", "{" + f.llmx_args("@mock:slow delay_ms=1000 deltas=5") + R"(,"_meta":)" +
                                              meta(kElicit) + "}");
  f.mcp.notify("notifications/cancelled", R"({"requestId":)" + slow + "}");
  // Answers without the state that asked for them.
  auto stray = f.call("tools/call", f.llmx_args("@mock:echo x") + R"(,"inputResponses":{"k":{"action":"accept"}})");
  CHECK(stray.integer("/error/code") == -32602);
  f.mcp.drain(1500ms);
  CHECK(f.mcp.responses_for(slow).empty());
  // A 2026 task is not a 2025 client's, and a 2025 task not a 2026 client's.
  auto task_id = f.call("tools/call", f.llmx_args("@mock:echo t"), kTasks).str("/result/taskId");
  f.mcp.initialize("2025-11-25", R"({"elicitation":{},"tasks":{}})");
  auto old = f.mcp.wait_for_response(f.mcp.request("tasks/get", R"({"taskId":")" + task_id + R"("})"));
  CHECK(old.integer("/error/code") == -32602);
  auto listed = f.mcp.wait_for_response(f.mcp.request("tasks/list", "{}"));
  CHECK(array_size(listed, "/result/tasks") == 0);
}
