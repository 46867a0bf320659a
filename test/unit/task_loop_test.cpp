// The task loop without an actor system (actors/task_loop.hpp): request -> stream -> tool calls
// -> compaction -> retry after a context overflow -> finish, as the steps it returns.
#include "actors/task_loop.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace llmx;

namespace {

TaskSpec spec(std::string prompt, bool compact_only = false) {
  TaskSpec s;
  s.conversation_id = "conv";
  s.sub_id = "sub";
  s.config.cwd = "/tmp";
  s.config.model = "test-model";
  if (!prompt.empty()) s.input = {TextInput{std::move(prompt)}};
  s.compact_only = compact_only;
  return s;
}

ToolContext tools() {
  ToolContext t;
  t.sub_id = "sub";
  t.cwd = "/tmp";
  t.approval = AskForApproval::never;
  t.sandbox.mode = SandboxMode::danger_full_access;
  return t;
}

// A short name for each step, events by their kind: "emit:task_started", "request", "run"...
std::vector<std::string> names(const TaskLoop::Steps& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    if (auto* e = std::get_if<TaskLoop::Emit>(&s))
      out.push_back("emit:" + std::string(e->msg.kind()));
    else if (std::holds_alternative<TaskLoop::Record>(s))
      out.push_back("record");
    else if (std::holds_alternative<TaskLoop::Replace>(s))
      out.push_back("replace");
    else if (std::holds_alternative<TaskLoop::Request>(s))
      out.push_back("request");
    else if (std::holds_alternative<TaskLoop::Ask>(s))
      out.push_back("ask");
    else if (std::holds_alternative<TaskLoop::Run>(s))
      out.push_back("run");
    else if (std::holds_alternative<TaskLoop::CallMcp>(s))
      out.push_back("call_mcp");
    else
      out.push_back(std::get<TaskLoop::Finish>(s).aborted ? "finish:aborted" : "finish");
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

const ModelRequest& last_request(const TaskLoop::Steps& steps) {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (auto* r = std::get_if<TaskLoop::Request>(&*it)) return *r->request;
  FAIL("no request step");
  throw 0;
}

MessageItem assistant(std::string text) { return MessageItem{"assistant", {OutputText{std::move(text)}}}; }

std::vector<ModelEvent> answer(std::string text, int64_t total_tokens = 10) {
  TokenUsage u;
  u.total_tokens = total_tokens;
  return {TextDelta{text}, ItemDone{assistant(text)}, Completed{u, "stop"}};
}

// A response that asks for one shell command (`argv_json`, as the model writes it) as call `id`.
std::vector<ModelEvent> shell_call(std::string argv_json, std::string id) {
  return {ItemDone{FunctionCallItem{"shell", R"({"command":)" + argv_json + "}", std::move(id)}},
          Completed{std::nullopt, "tool_calls"}};
}

}  // namespace

TEST_CASE("task loop: a plain answer is one request, the streamed events, and the end") {
  TaskLoop loop(spec("hello"), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  auto n = names(steps);
  CHECK(n.front() == "emit:task_started");
  CHECK(has(n, "record"));  // the user's input joins the history
  CHECK(n.back() == "request");
  auto seq = last_request(steps).seq;
  CHECK(last_request(steps).call_id_prefix == "call_sub_1");

  steps.clear();
  auto stale = answer("old");
  loop.on_model_events(seq + 7, 1, stale, steps);  // another request's events: ignored
  CHECK(steps.empty());
  auto events = answer("hi there");
  loop.on_model_events(seq, 1, events, steps);
  n = names(steps);
  CHECK(has(n, "emit:agent_message_delta"));
  CHECK(has(n, "emit:agent_message"));
  CHECK(has(n, "emit:token_count"));
  CHECK(has(n, "record"));
  CHECK(n[n.size() - 2] == "emit:task_complete");
  CHECK(n.back() == "finish");
  auto* done = std::get<TaskLoop::Emit>(steps[steps.size() - 2]).msg.get_if<TaskCompleteEvent>();
  REQUIRE(done);
  CHECK(done->last_agent_message == "hi there");
  CHECK(loop.done());
}

TEST_CASE("task loop: a tool call runs, its output joins the history, and the next request follows") {
  TaskLoop loop(spec("list"), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  auto seq = last_request(steps).seq;
  steps.clear();
  auto call = shell_call(R"(["echo","hi"])", "call-1");
  loop.on_model_events(seq, 1, call, steps);
  auto n = names(steps);
  REQUIRE(n.back() == "run");
  auto run = std::get<TaskLoop::Run>(steps.back());
  CHECK(run.request.call_id == "call-1");
  CHECK(run.request.argv == std::vector<std::string>{"echo", "hi"});

  steps.clear();
  ExecDone done;
  done.call_id = "call-1";
  done.exit_code = 0;
  done.stdout_text = done.aggregated = "hi\n";
  loop.on_exec(run.generation + 1, done, steps);  // a stale answer: ignored
  CHECK(steps.empty());
  loop.on_exec(run.generation, done, steps);
  n = names(steps);
  CHECK(has(n, "emit:exec_command_end"));
  CHECK(has(n, "record"));
  REQUIRE(n.back() == "request");
  auto& next = last_request(steps);
  CHECK(next.seq == seq + 1);
  bool has_output = false;
  for (const auto& item : next.prompt.input)
    if (auto* o = item.get_if<FunctionCallOutputItem>(); o && o->call_id == "call-1") has_output = true;
  CHECK(has_output);
}

TEST_CASE("task loop: input that arrives mid-task joins the next request, an interrupt aborts once") {
  TaskLoop loop(spec("first"), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  auto seq = last_request(steps).seq;
  loop.inject({TextInput{"second"}});
  steps.clear();
  auto events = answer("one");
  loop.on_model_events(seq, 1, events, steps);
  auto n = names(steps);
  CHECK(n.back() == "request");  // not finished: the injected input goes out
  CHECK(has(n, "emit:user_message"));

  steps.clear();
  loop.interrupt(steps);
  CHECK(names(steps) == std::vector<std::string>{"emit:turn_aborted", "finish:aborted"});
  steps.clear();
  loop.interrupt(steps);
  CHECK(steps.empty());
}

TEST_CASE("task loop: a manual compaction retries with less history after a context overflow") {
  auto s = spec("", true);
  s.history = {MessageItem{"user", {InputText{"one"}}}, MessageItem{"assistant", {OutputText{"two"}}},
               MessageItem{"user", {InputText{"three"}}}};
  TaskLoop loop(std::move(s), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  auto first = last_request(steps);
  CHECK(first.prompt.tools.empty());  // a compaction request offers no tools
  steps.clear();
  loop.on_model_failed(first.seq, "This model's maximum context length is 10 tokens", steps);
  REQUIRE(names(steps) == std::vector<std::string>{"request"});
  auto second = last_request(steps);
  CHECK(second.seq == first.seq + 1);
  CHECK(second.prompt.input.size() < first.prompt.input.size());

  steps.clear();
  auto summary = answer("the summary");
  loop.on_model_events(second.seq, 1, summary, steps);
  auto n = names(steps);
  CHECK(has(n, "emit:background_event"));  // what was trimmed is said
  CHECK(has(n, "replace"));
  CHECK(n.back() == "finish");
  auto& replaced = std::get<TaskLoop::Replace>(*std::find_if(
      steps.begin(), steps.end(), [](const auto& st) { return std::holds_alternative<TaskLoop::Replace>(st); }));
  CHECK(replaced.summary.find("the summary") != std::string::npos);
}

TEST_CASE("task loop: any other model failure ends the task with an error") {
  TaskLoop loop(spec("x"), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  auto seq = last_request(steps).seq;
  steps.clear();
  loop.on_model_retrying(seq, 1, "reconnecting 1/5", steps);
  CHECK(names(steps) == std::vector<std::string>{"emit:stream_error"});
  steps.clear();
  loop.on_model_failed(seq, "401 unauthorized", steps);
  CHECK(names(steps) == std::vector<std::string>{"emit:error", "emit:task_complete", "finish"});
}

TEST_CASE("task loop: what a retried attempt still streams is dropped, and the next request starts clean") {
  TaskLoop loop(spec("list"), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  auto seq = last_request(steps).seq;
  steps.clear();
  // The first attempt gives up (an idle timeout); its cancel reaches the HTTP thread late, so a
  // whole answer of it arrives after the notice. It must not end the turn or mix with attempt 2.
  loop.on_model_retrying(seq, 1, "Reconnecting... 1/5", steps);
  CHECK(names(steps) == std::vector<std::string>{"emit:stream_error"});
  steps.clear();
  auto late = shell_call(R"(["echo","old"])", "call-old");
  loop.on_model_events(seq, 1, late, steps);
  CHECK(steps.empty());
  auto call = shell_call(R"(["echo","hi"])", "call-1");
  loop.on_model_events(seq, 2, call, steps);
  REQUIRE(names(steps).back() == "run");
  auto run = std::get<TaskLoop::Run>(steps.back());
  CHECK(run.request.call_id == "call-1");

  steps.clear();
  ExecDone done;
  done.call_id = "call-1";
  done.exit_code = 0;
  loop.on_exec(run.generation, done, steps);
  REQUIRE(names(steps).back() == "request");
  CHECK(last_request(steps).seq == seq + 1);
  steps.clear();
  auto events = answer("done");  // the new request's first attempt counts again
  loop.on_model_events(seq + 1, 1, events, steps);
  CHECK(names(steps).back() == "finish");
}

TEST_CASE("task loop: live output deltas are capped per stream") {
  TaskLoop loop(spec("x"), tools());
  TaskLoop::Steps steps;
  loop.start(steps);
  steps.clear();
  for (size_t i = 0; i < TaskLoop::kMaxDeltasPerStream + 5; ++i) loop.on_exec_output(ExecOutput{"c", false, "x"}, steps);
  loop.on_exec_output(ExecOutput{"c", true, "e"}, steps);
  CHECK(steps.size() == TaskLoop::kMaxDeltasPerStream + 1);
}

TEST_CASE("task loop: MCP tools are offered, a call goes to its server, an interrupt ends its item too") {
  McpServers servers;
  McpServerStatus docs;
  docs.server = "docs";
  docs.ready = true;
  docs.tools = {mcp::ServerTool{"search", "Searches.", RawJson{R"({"type":"object","properties":{"q":{"type":"string"}}})"}, true}};
  servers.servers.push_back(docs);
  auto t = tools();
  t.mcp = std::make_shared<const McpTools>(servers, std::map<std::string, McpServerConfig>{});
  auto s = spec("find it");
  s.first_task = true;
  TaskLoop loop(s, t);
  TaskLoop::Steps steps;
  loop.start(steps);
  auto n = names(steps);
  CHECK(has(n, "emit:mcp_startup_update"));
  CHECK(has(n, "emit:mcp_startup_complete"));
  auto& offered = last_request(steps).prompt.tools;
  CHECK(std::any_of(offered.begin(), offered.end(), [](const ToolSpec& t) { return t.name == "mcp__docs__search"; }));

  steps.clear();
  std::vector<ModelEvent> call{ItemDone{FunctionCallItem{"mcp__docs__search", R"({"q":"serde"})", "call-9"}},
                               Completed{TokenUsage{}, "tool_calls"}};
  loop.on_model_events(1, 1, call, steps);
  n = names(steps);
  CHECK(has(n, "emit:mcp_tool_call_begin"));
  REQUIRE(n.back() == "call_mcp");
  auto& mcp_call = std::get<TaskLoop::CallMcp>(steps.back()).call;
  CHECK(mcp_call.tool == "search");
  CHECK(mcp_call.arguments->text == R"({"q":"serde"})");

  steps.clear();
  loop.interrupt(steps);
  n = names(steps);
  REQUIRE(n.size() >= 3);
  CHECK(n[0] == "emit:mcp_tool_call_end");
  CHECK(std::get<TaskLoop::Emit>(steps[0]).msg.get_if<McpToolCallEndEvent>()->result.text ==
        R"({"Err":"cancelled: the turn was interrupted"})");
  CHECK(has(n, "emit:turn_aborted"));
  CHECK(n.back() == "finish:aborted");
}

TEST_CASE("task loop: images for a model without vision: refused at the start, left out of steered input") {
  auto s = spec("");
  s.input = {TextInput{"look"}, ImageInput{"data:image/png;base64,AAAA"}};
  s.model = models::spec_of({}, "text-only", WireApi::chat);
  s.model.meta.vision = false;
  s.model.meta.context_window = 1000;
  TaskLoop refused(s, tools());
  TaskLoop::Steps steps;
  refused.start(steps);
  CHECK(names(steps) == std::vector<std::string>{"emit:task_started", "emit:error", "emit:task_complete", "finish"});
  auto* started = std::get<TaskLoop::Emit>(steps[0]).msg.get_if<TaskStartedEvent>();
  REQUIRE(started);
  REQUIRE(started->model_context_window.has_value());
  CHECK(*started->model_context_window == 1000);  // the provider's window

  s.input = {TextInput{"first"}};
  TaskLoop loop(s, tools());
  steps.clear();
  loop.start(steps);
  auto seq = last_request(steps).seq;
  loop.inject({TextInput{"and this"}, ImageInput{"data:image/png;base64,AAAA"}});
  loop.inject({LocalImageInput{"/tmp/only-an-image.png"}});
  steps.clear();
  auto events = answer("one");
  loop.on_model_events(seq, 1, events, steps);
  auto n = names(steps);
  CHECK(has(n, "emit:warning"));
  CHECK(n.back() == "request");  // the text goes on, without the images
  auto input = last_request(steps).prompt.input;
  REQUIRE_FALSE(input.empty());
  auto* last = input.back().get_if<MessageItem>();
  REQUIRE(last);
  CHECK(last->text() == "and this");
  CHECK(std::none_of(last->content.begin(), last->content.end(),
                     [](const ContentItem& c) { return c.is<InputImage>(); }));
}
