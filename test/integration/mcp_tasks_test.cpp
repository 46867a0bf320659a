// MCP tasks (2025-11-25, issue 16 point 2) on the raw wire: `llmx` and `llmx-reply` called as
// tasks answer a CreateTaskResult at once; tasks/get, tasks/result (blocking, tagged with its
// task), tasks/list with cursors and tasks/cancel follow the turn; an approval puts the task in
// input_required with an elicitation tagged by the task.
#include <doctest/doctest.h>

#include <filesystem>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTaskCaps = R"({"elicitation":{},"tasks":{"list":{},"cancel":{}}})";
constexpr std::string_view kRelated = "/_meta/io.modelcontextprotocol~1related-task/taskId";

struct TaskFixture : McpServerFixture {
  explicit TaskFixture(std::string_view version = "2025-11-25", std::string_view caps = kTaskCaps) {
    init = mcp.initialize(version, caps);
  }
  Message init;

  // tools/call of `llmx` as a task; returns the CreateTaskResult response.
  Message call_as_task(std::string_view prompt, std::string_view extra_args = {}, int64_t ttl = 60000) {
    auto params = llmx_call_params(prompt, extra_args);
    params.pop_back();
    params += R"(,"task":{"ttl":)" + std::to_string(ttl) + "}}";
    return mcp.wait_for_response(mcp.request("tools/call", params));
  }
  Message task_call(std::string_view method, std::string_view task_id) {
    return mcp.wait_for_response(mcp.request(method, R"({"taskId":)" + json_quote(task_id) + "}"));
  }
  // Polls tasks/get until the status is `status` (or a terminal one).
  Message poll_until(std::string_view task_id, std::string_view status) {
    auto deadline = std::chrono::steady_clock::now() + kDefaultTimeout;
    while (true) {
      auto got = task_call("tasks/get", task_id);
      auto s = got.str("/result/status");
      if (s == status || s == "completed" || s == "failed" || s == "cancelled") return got;
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(20ms);
    }
  }
};

}  // namespace

TEST_CASE("mcp tasks: declared in 2025-11-25, tools offer optional task support") {
  TaskFixture f;
  CHECK(f.init.has("/result/capabilities/tasks/list"));
  CHECK(f.init.has("/result/capabilities/tasks/cancel"));
  CHECK(f.init.has("/result/capabilities/tasks/requests/tools/call"));
  auto tools = f.mcp.wait_for_response(f.mcp.request("tools/list"));
  CHECK(tools.str("/result/tools/0/execution/taskSupport") == "optional");
  CHECK(tools.str("/result/tools/1/execution/taskSupport") == "optional");
}

TEST_CASE("mcp tasks: a call as a task answers at once, tasks/result gives the answer tagged with the task") {
  TaskFixture f;
  auto created = f.call_as_task("@mock:slow delay_ms=300 deltas=3");
  REQUIRE_FALSE(created.is_error());
  auto task_id = created.str("/result/task/taskId");
  CHECK(task_id.size() == 36);
  CHECK(created.str("/result/task/status") == "working");
  CHECK(created.integer("/result/task/ttl") == 60000);
  CHECK(created.has("/result/task/createdAt"));
  CHECK(created.has("/result/task/lastUpdatedAt"));
  CHECK(created.integer("/result/task/pollInterval") > 0);
  CHECK_FALSE(created.has("/result/content"));  // the answer is not in the CreateTaskResult

  // tasks/result blocks until the turn has ended.
  auto result = f.task_call("tasks/result", task_id);
  REQUIRE_FALSE(result.is_error());
  CHECK_FALSE(result_is_error(result));
  CHECK(result.str("/result/structuredContent/threadId").size() == 36);
  CHECK(result.str(std::string("/result") + std::string(kRelated)) == task_id);
  auto done = f.task_call("tasks/get", task_id);
  CHECK(done.str("/result/status") == "completed");
  CHECK(done.str("/result/taskId") == task_id);
  CHECK_FALSE(done.has("/result/pollInterval"));
  // The same answer again, for as long as the task is kept.
  CHECK(f.task_call("tasks/result", task_id).text("/result") == result.text("/result"));
  // Status notifications went out on the way (MAY; llmx sends them).
  bool completed_notice = false;
  for (const auto& m : f.mcp.log())
    completed_notice |= m.method() == "notifications/tasks/status" && m.str("/params/taskId") == task_id &&
                        m.str("/params/status") == "completed";
  CHECK(completed_notice);
}

TEST_CASE("mcp tasks: llmx-reply continues the conversation as a task") {
  TaskFixture f;
  auto first = f.task_call("tasks/result", f.call_as_task("@mock:echo one").str("/result/task/taskId"));
  auto thread = first.str("/result/structuredContent/threadId");
  auto params = R"({"name":"llmx-reply","arguments":{"conversationId":")" + thread +
                R"(","prompt":"@mock:echo two"},"task":{}})";
  auto created = f.mcp.wait_for_response(f.mcp.request("tools/call", params));
  auto task_id = created.str("/result/task/taskId");
  REQUIRE_FALSE(task_id.empty());
  CHECK(created.integer("/result/task/ttl") == 3600000);  // the default when none is asked
  auto second = f.task_call("tasks/result", task_id);
  CHECK(result_text(second) == "echo: two");
  CHECK(second.str("/result/structuredContent/threadId") == thread);
}

TEST_CASE("mcp tasks: tasks/cancel interrupts the turn, and a finished task cannot be cancelled") {
  TaskFixture f;
  auto task_id = f.call_as_task("@mock:slow delay_ms=1000 deltas=10").str("/result/task/taskId");
  auto waiting = f.mcp.request("tasks/result", R"({"taskId":")" + task_id + R"("})");
  auto cancelled = f.task_call("tasks/cancel", task_id);
  REQUIRE_FALSE(cancelled.is_error());
  CHECK(cancelled.str("/result/status") == "cancelled");
  // The blocked tasks/result is answered: an error result that says so.
  auto result = f.mcp.wait_for_response(waiting, 5s);
  CHECK(result_is_error(result));
  CHECK(result_text(result).find("cancelled") != std::string::npos);
  CHECK(f.task_call("tasks/get", task_id).str("/result/status") == "cancelled");
  auto again = f.task_call("tasks/cancel", task_id);
  REQUIRE(again.is_error());
  CHECK(again.integer("/error/code") == -32602);
  CHECK(again.str("/error/message") == "Cannot cancel task: already in terminal status 'cancelled'");
  // The turn really stops (cancelled is said at once, the turn ends just after; until then the
  // conversation refuses another turn), and then the conversation takes the next prompt.
  auto thread = result.str("/result/structuredContent/threadId");
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text = result_text(f.mcp.wait_for_response(f.mcp.call_reply(thread, "@mock:echo after")));
    if (text.find("already running a turn") == std::string::npos) break;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(text == "echo: after");
}

TEST_CASE("mcp tasks: after a cancelled task, the next task in its conversation runs and is answered") {
  TaskFixture f;
  auto first = f.call_as_task("@mock:slow delay_ms=1000 deltas=10").str("/result/task/taskId");
  REQUIRE(f.task_call("tasks/cancel", first).str("/result/status") == "cancelled");
  auto thread = f.task_call("tasks/result", first).str("/result/structuredContent/threadId");
  REQUIRE_FALSE(thread.empty());
  // The cancelled turn ends just after its task (until then the conversation refuses a turn);
  // the next task there gets a call of its own, so its events and its answer reach it.
  auto params = R"({"name":"llmx-reply","arguments":{"conversationId":")" + thread +
                R"(","prompt":"@mock:echo after"},"task":{}})";
  std::string task_id;
  for (int i = 0; i < 100 && task_id.empty(); ++i) {
    auto created = f.mcp.wait_for_response(f.mcp.request("tools/call", params));
    if (!created.is_error()) task_id = created.str("/result/task/taskId");
    else std::this_thread::sleep_for(20ms);
  }
  REQUIRE_FALSE(task_id.empty());
  CHECK(result_text(f.task_call("tasks/result", task_id)) == "echo: after");
}

TEST_CASE("mcp tasks: unknown ids and bad cursors are -32602, tasks/list pages every task") {
  TaskFixture f;
  for (const char* method : {"tasks/get", "tasks/result", "tasks/cancel"}) {
    CAPTURE(method);
    auto r = f.task_call(method, "00000000-0000-4000-8000-000000000000");
    REQUIRE(r.is_error());
    CHECK(r.integer("/error/code") == -32602);
  }
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(f.call_as_task("@mock:echo x").str("/result/task/taskId"));
  auto list = f.mcp.wait_for_response(f.mcp.request("tasks/list", "{}"));
  REQUIRE(array_size(list, "/result/tasks") == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(list.str("/result/tasks/" + std::to_string(i) + "/taskId") == ids[i]);
  CHECK_FALSE(list.has("/result/nextCursor"));
  auto bad = f.mcp.wait_for_response(f.mcp.request("tasks/list", R"({"cursor":"not-a-cursor"})"));
  REQUIRE(bad.is_error());
  CHECK(bad.integer("/error/code") == -32602);
}

TEST_CASE("mcp tasks: an approval puts the task in input_required with an elicitation tagged by the task") {
  TaskFixture f;
  TempDir ws{"llmx-task-ws"};
  auto args = R"("sandbox":"workspace-write","approval-policy":"untrusted","cwd":)" + json_quote(ws.path());
  auto task_id = f.call_as_task("@mock:shell cmd=touch asked.txt", args).str("/result/task/taskId");
  auto ask = f.mcp.wait_for([](const Message& m) { return m.is_request() && m.method() == "elicitation/create"; },
                            "the task's elicitation");
  CHECK(ask.str(std::string("/params") + std::string(kRelated)) == task_id);
  CHECK(ask.str("/params/mode") == "form");
  CHECK(f.task_call("tasks/get", task_id).str("/result/status") == "input_required");
  f.mcp.respond(ask.id(), R"({"action":"accept","content":{"decision":"approved"}})");
  auto result = f.task_call("tasks/result", task_id);
  CHECK_FALSE(result_is_error(result));
  CHECK(fs::exists(fs::path(ws.path()) / "asked.txt"));
  CHECK(f.task_call("tasks/get", task_id).str("/result/status") == "completed");
}

TEST_CASE("mcp tasks: a 2025-06-18 client has no tasks, its task parameter is ignored") {
  TaskFixture f("2025-06-18", R"({"elicitation":{}})");
  CHECK_FALSE(f.init.has("/result/capabilities/tasks"));
  auto plain = f.call_as_task("@mock:echo old");
  REQUIRE_FALSE(plain.is_error());
  CHECK(result_text(plain) == "echo: old");  // answered as a plain call
  auto get = f.task_call("tasks/get", "00000000-0000-4000-8000-000000000000");
  REQUIRE(get.is_error());
  CHECK(get.integer("/error/code") == -32601);
}

TEST_CASE("mcp tasks: a task and a plain call never share a turn of one conversation") {
  TaskFixture f;
  auto thread = f.task_call("tasks/result", f.call_as_task("@mock:echo first").str("/result/task/taskId"))
                    .str("/result/structuredContent/threadId");
  // A task runs a slow turn there; a plain llmx-reply is refused at once, the task goes on.
  auto params = R"({"name":"llmx-reply","arguments":{"conversationId":")" + thread +
                R"(","prompt":"@mock:slow delay_ms=200 deltas=3"},"task":{}})";
  auto task_id = f.mcp.wait_for_response(f.mcp.request("tools/call", params)).str("/result/task/taskId");
  auto plain = f.mcp.wait_for_response(f.mcp.call_reply(thread, "@mock:echo intruder"));
  CHECK(result_is_error(plain));
  CHECK(result_text(plain).find("already running a turn") != std::string::npos);
  // A second task there is refused too: a task call's failure is a JSON-RPC error, not a result.
  auto second = f.mcp.wait_for_response(f.mcp.request("tools/call", params));
  REQUIRE(second.is_error());
  CHECK(second.integer("/error/code") == -32602);
  auto done = f.task_call("tasks/result", task_id);
  CHECK_FALSE(result_is_error(done));
  CHECK(result_text(done).find("intruder") == std::string::npos);
}

TEST_CASE("mcp tasks: a tasks/result the client cancelled gets no reply, the task goes on") {
  TaskFixture f;
  auto task_id = f.call_as_task("@mock:slow delay_ms=100 deltas=3").str("/result/task/taskId");
  auto waiting = f.mcp.request("tasks/result", R"({"taskId":")" + task_id + R"("})");
  f.mcp.notify("notifications/cancelled", R"({"requestId":)" + waiting + "}");
  CHECK(f.poll_until(task_id, "completed").str("/result/status") == "completed");
  f.mcp.drain(200ms);
  CHECK(f.mcp.responses_for(waiting).empty());
}
