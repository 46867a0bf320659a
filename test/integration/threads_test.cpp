// Stored threads through the real binary: rollouts written as conversations happen, resume
// (appending to the same file, P12) after a clean exit and after kill -9, listing with cursors,
// archive and unarchive (P11), compaction recorded and restored.
#include <doctest/doctest.h>

#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

size_t count_of(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string_view::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// Every complete line of a rollout is one JSON object with timestamp/type/payload.
void check_rollout_lines(const std::string& text) {
  for (const auto& line : split_lines(text)) {
    CAPTURE(line);
    Message m(line);
    CHECK(m.at("/timestamp").is_string());
    CHECK(m.at("/type").is_string());
    CHECK(m.at("/payload").is_object());
  }
}

std::string last_request_text(MockLlm& mock) {
  auto reqs = recorded_requests(mock);
  auto arr = reqs.at("/requests").get_array().value_unsafe();
  std::string last;
  for (auto r : arr) last = llmx::json::to_text(r);
  return last;
}

}  // namespace

TEST_CASE("threads: exec --thread-source (the SDK's threadSource) is recorded in a new thread's session_meta") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  auto r = run_llmx({"exec", "--skip-git-repo-check", "--thread-source", "ci-bot", "@mock:text deltas=1"}, env);
  INFO("stderr: " << r.err);
  REQUIRE(r.status.ok());
  auto files = rollout_files(home.file("sessions"));
  REQUIRE(files.size() == 1);
  Message meta(split_lines(read_file(files[0])).front());
  CHECK(meta.str("/payload/thread_source") == "ci-bot");
  CHECK(meta.str("/payload/source") == "exec");
  // Without the flag the field is absent, as before.
  auto plain = run_llmx({"exec", "--skip-git-repo-check", "@mock:text deltas=1"}, env);
  REQUIRE(plain.status.ok());
  files = rollout_files(home.file("sessions"));
  REQUIRE(files.size() == 2);
  size_t with_field = 0;
  for (auto& f : files) with_field += contains(read_file(f), R"("thread_source")") ? 1 : 0;
  CHECK(with_field == 1);
}

TEST_CASE("threads: exec records a rollout, exec resume continues the same file with the old history") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  auto first = run_llmx({"exec", "--skip-git-repo-check", "remember the word PELICAN @mock:text deltas=2"}, env);
  INFO("stderr: " << first.err);
  REQUIRE(first.status.ok());
  auto files = rollout_files(home.file("sessions"));
  REQUIRE(files.size() == 1);
  auto text = read_file(files[0]);
  check_rollout_lines(text);
  CHECK(count_of(text, R"("type":"session_meta")") == 1);
  CHECK(contains(text, R"("source":"exec")"));
  CHECK(contains(text, R"("type":"turn_context")"));
  CHECK(contains(text, R"("type":"user_message")"));
  CHECK(contains(text, R"("type":"agent_message")"));
  CHECK_FALSE(contains(text, "agent_message_delta"));  // deltas are not persisted (§9.3)
  Message meta(split_lines(text).front());
  auto id = meta.str("/payload/id");
  CHECK(contains(files[0], id + ".jsonl"));

  auto second = run_llmx({"exec", "--skip-git-repo-check", "resume", "--last", "what was the word? @mock:text deltas=2"}, env);
  INFO("stderr: " << second.err);
  REQUIRE(second.status.ok());
  CHECK(rollout_files(home.file("sessions")) == files);  // appended, no new file (P12)
  text = read_file(files[0]);
  CHECK(count_of(text, R"("type":"session_meta")") == 1);
  CHECK(contains(text, "what was the word?"));
  CHECK(contains(last_request_text(mock), "PELICAN"));  // the old history went to the model

  auto third = run_llmx({"exec", "--skip-git-repo-check", "--core-events", "resume", id, "and again @mock:text deltas=2"}, env);
  INFO("stderr: " << third.err);
  REQUIRE(third.status.ok());
  auto events = parse_json_lines(third.out);
  REQUIRE(!events.empty());
  CHECK(events.front().str("/msg/type") == "session_configured");
  CHECK(events.front().str("/msg/session_id") == id);
  CHECK(events.front().str("/msg/rollout_path") == files[0]);
  CHECK(contains(events.front().text("/msg/initial_messages"), "remember the word PELICAN"));
  CHECK(count_of(read_file(files[0]), R"("type":"user_message")") == 3);

  auto bad = run_llmx({"exec", "--skip-git-repo-check", "resume", "not-a-uuid", "x"}, env);
  CHECK(bad.status.exited);
  CHECK(bad.status.code == 1);
  CHECK(contains(bad.err, "not-a-uuid"));
  auto unknown = run_llmx({"exec", "--skip-git-repo-check", "resume", "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c", "x"}, env);
  CHECK(unknown.status.code == 1);
  CHECK(contains(unknown.err, "no rollout found for conversation id 0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c"));
}

TEST_CASE("threads: kill -9 in the middle of a turn leaves a rollout that resumes") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  SpawnOptions o;
  o.argv = {LLMX_BIN, "exec", "--skip-git-repo-check", "the secret is OSPREY @mock:hang"};
  o.env = env;
  ChildProcess p(std::move(o));
  p.close_stdin();
  // Wait until the user message is on disk, then kill without any chance to flush.
  std::string file;
  for (int i = 0; i < 500 && file.empty(); ++i) {
    auto files = rollout_files(home.file("sessions"));
    if (!files.empty() && contains(read_file(files[0]), R"("type":"user_message")")) file = files[0];
    else std::this_thread::sleep_for(10ms);
  }
  REQUIRE(!file.empty());
  p.kill(SIGKILL);
  p.wait();
  // Simulate the worst case of a crash mid-write as well: a cut last line.
  { std::ofstream(file, std::ios::app) << R"({"timestamp":"2026-01-01T00:00:00.000Z","type":"response_it)"; }

  auto r = run_llmx({"exec", "--skip-git-repo-check", "--core-events", "resume", "--last", "what is the secret? @mock:text deltas=2"}, env);
  INFO("stderr: " << r.err);
  REQUIRE(r.status.ok());
  CHECK(contains(last_request_text(mock), "OSPREY"));
  auto text = read_file(file);
  CHECK(count_of(text, R"("type":"session_meta")") == 1);
  CHECK(contains(text, "what is the secret?"));
  CHECK(rollout_files(home.file("sessions")).size() == 1);
}

TEST_CASE("threads: MCP listConversations pages newest first, archive and unarchive move threads out and back") {
  McpServerFixture f;
  auto& mcp = f.mcp;
  mcp.initialize();
  std::vector<std::string> ids;
  for (std::string word : {"ALPHA", "BRAVO", "CHARLIE"}) {
    auto rid = mcp.call_llmx("thread " + word + " @mock:text deltas=1");
    auto resp = mcp.wait_for_response(rid);
    REQUIRE_FALSE(result_is_error(resp));
    ids.push_back(resp.str("/result/structuredContent/threadId"));
  }
  auto page1 = mcp.wait_for_response(mcp.request("listConversations", R"({"pageSize":2})"));
  INFO(page1.line());
  REQUIRE_FALSE(page1.is_error());
  auto items = page1.at("/result/items").get_array().value_unsafe();
  REQUIRE(items.size() == 2);
  CHECK(page1.str("/result/items/0/conversationId") == ids[2]);
  CHECK(page1.str("/result/items/1/conversationId") == ids[1]);
  CHECK(page1.str("/result/items/0/preview") == "thread CHARLIE @mock:text deltas=1");
  CHECK(page1.str("/result/items/0/source") == "mcp");
  CHECK(page1.str("/result/items/0/modelProvider") == "litellm");
  auto cursor = page1.str("/result/nextCursor");
  auto page2 = mcp.wait_for_response(
      mcp.request("listConversations", R"({"pageSize":2,"cursor":")" + cursor + R"("})"));
  INFO(page2.line());
  REQUIRE(page2.at("/result/items").get_array().value_unsafe().size() == 1);
  CHECK(page2.str("/result/items/0/conversationId") == ids[0]);
  CHECK(page2.at("/result/nextCursor").is_null());

  // Sessions of other front ends are listed too, with their source; `sources` filters them.
  auto exec = run_llmx({"exec", "--skip-git-repo-check", "from exec @mock:text deltas=1"}, llmx_env(f.home.path(), f.mock.url()));
  REQUIRE(exec.status.ok());
  auto only_exec = mcp.wait_for_response(mcp.request("listConversations", R"({"sources":["exec"]})"));
  INFO(only_exec.line());
  REQUIRE(only_exec.at("/result/items").get_array().value_unsafe().size() == 1);
  CHECK(only_exec.str("/result/items/0/source") == "exec");
  CHECK(only_exec.str("/result/items/0/preview") == "from exec @mock:text deltas=1");
  auto only_mcp = mcp.wait_for_response(mcp.request("listConversations", R"({"sources":["mcp"],"pageSize":10})"));
  CHECK(only_mcp.at("/result/items").get_array().value_unsafe().size() == 3);
  auto other_provider = mcp.wait_for_response(mcp.request("listConversations", R"({"modelProviders":["openai"]})"));
  CHECK(other_provider.at("/result/items").get_array().value_unsafe().size() == 0);

  auto summary = mcp.wait_for_response(
      mcp.request("getConversationSummary", R"({"conversationId":")" + ids[1] + R"("})"));
  INFO(summary.line());
  CHECK(summary.str("/result/summary/conversationId") == ids[1]);
  CHECK(summary.str("/result/summary/preview") == "thread BRAVO @mock:text deltas=1");
  CHECK(summary.str("/result/summary/source") == "mcp");
  auto by_path = mcp.wait_for_response(mcp.request(
      "getConversationSummary", R"({"rolloutPath":")" + summary.str("/result/summary/path") + R"("})"));
  CHECK(by_path.str("/result/summary/conversationId") == ids[1]);
  auto no_summary = mcp.wait_for_response(
      mcp.request("getConversationSummary", R"({"conversationId":"0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c"})"));
  CHECK(no_summary.integer("/error/code") == -32600);

  auto bad_cursor = mcp.wait_for_response(mcp.request("listConversations", R"({"cursor":"garbage"})"));
  CHECK(bad_cursor.integer("/error/code") == -32602);

  auto path = page2.str("/result/items/0/path");
  auto wrong = mcp.wait_for_response(mcp.request(
      "archiveConversation", R"({"conversationId":")" + ids[0] + R"(","rolloutPath":"/etc/passwd"})"));
  CHECK(wrong.integer("/error/code") == -32600);
  CHECK(contains(wrong.str("/error/message"), "must be in sessions directory"));
  auto archived = mcp.wait_for_response(mcp.request(
      "archiveConversation", R"({"conversationId":")" + ids[0] + R"(","rolloutPath":")" + path + R"("})"));
  INFO(archived.line());
  REQUIRE_FALSE(archived.is_error());
  CHECK_FALSE(fs::exists(path));
  CHECK(fs::exists(f.home.file("archived_sessions/" + fs::path(path).filename().string())));
  auto after = mcp.wait_for_response(mcp.request("listConversations", R"({"sources":["mcp"]})"));
  CHECK(after.at("/result/items").get_array().value_unsafe().size() == 2);
  CHECK_FALSE(contains(after.line(), ids[0]));

  auto restored = mcp.wait_for_response(
      mcp.request("unarchiveConversation", R"({"conversationId":")" + ids[0] + R"("})"));
  INFO(restored.line());
  REQUIRE_FALSE(restored.is_error());
  CHECK(restored.str("/result/rolloutPath") == path);
  auto all = mcp.wait_for_response(mcp.request("listConversations", R"({"sources":["mcp"]})"));
  CHECK(all.at("/result/items").get_array().value_unsafe().size() == 3);
  CHECK(contains(all.line(), ids[0]));
}

TEST_CASE("threads: MCP resumeConversation sends sessionConfigured first and continues the stored history") {
  TempDir home;
  MockLlm mock;
  std::string id, path;
  {
    McpClient mcp(home.path(), mock.url());
    mcp.initialize();
    auto resp = mcp.wait_for_response(mcp.call_llmx("my name is KESTREL @mock:text deltas=1"));
    REQUIRE_FALSE(result_is_error(resp));
    id = resp.str("/result/structuredContent/threadId");
    mcp.close_stdin();
    CHECK(mcp.wait_exit().ok());
  }
  McpClient mcp(home.path(), mock.url());
  mcp.initialize();
  auto rid = mcp.request("resumeConversation", R"({"conversationId":")" + id + R"("})");
  auto notification = mcp.wait_for([](const Message& m) { return m.method() == "sessionConfigured"; },
                                   "sessionConfigured");
  auto resp = mcp.wait_for_response(rid);
  INFO(resp.line());
  REQUIRE_FALSE(resp.is_error());
  CHECK(notification.index() < resp.index());
  CHECK(resp.str("/result/conversationId") == id);
  CHECK(notification.str("/params/sessionId") == id);
  CHECK(contains(resp.text("/result/initialMessages"), "my name is KESTREL"));
  path = resp.str("/result/rolloutPath");
  auto reply = mcp.wait_for_response(mcp.call_reply(id, "what is my name? @mock:text deltas=1"));
  REQUIRE_FALSE(result_is_error(reply));
  CHECK(contains(last_request_text(mock), "KESTREL"));
  // Rollout lines reach the disk through the store actor, on their own path beside the reply: a
  // busy machine may answer first.
  auto text = read_file(path);
  for (int i = 0; i < 200 && !contains(text, "what is my name?"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    text = read_file(path);
  }
  CHECK(count_of(text, R"("type":"session_meta")") == 1);
  CHECK(contains(text, "what is my name?"));

  auto missing = mcp.wait_for_response(
      mcp.request("resumeConversation", R"({"conversationId":"0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c"})"));
  CHECK(missing.integer("/error/code") == -32600);
  CHECK(contains(missing.str("/error/message"), "no rollout found"));
  auto nothing = mcp.wait_for_response(mcp.request("resumeConversation", R"({})"));
  CHECK(nothing.integer("/error/code") == -32600);
}

TEST_CASE("threads: auto-compaction summarises, records `compacted`, and a resume restores the summary") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  // The first response reports 50000 prompt tokens (over the limit of 20000); the compaction
  // request and the continued turn report the real (small) size.
  auto r = run_llmx({"exec", "--skip-git-repo-check", "--core-events", "-c", "model_auto_compact_token_limit=20000", "-c",
                     "compact_prompt=Summarise please.",
                     "big task ZEBRA @mock:text deltas=2 prompt_tokens=50000 prompt_tokens_times=1"},
                    env);
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.status.ok());
  auto events = parse_json_lines(r.out);
  std::vector<std::string> types;
  for (auto& e : events) types.push_back(e.str("/msg/type"));
  CHECK(std::count(types.begin(), types.end(), "task_started") == 1);  // inline: no second task
  bool completed = false, warned = false;
  for (auto& e : events) {
    if (e.str("/msg/type") == "agent_message" && e.str("/msg/message") == "Compact task completed") completed = true;
    if (e.str("/msg/type") == "warning" && contains(e.str("/msg/message"), "multiple compactions")) warned = true;
  }
  CHECK(completed);
  CHECK(warned);
  // Requests: the turn, the compaction (prompt last, no tools), the continued turn.
  auto reqs = recorded_requests(mock);
  auto arr = reqs.at("/requests").get_array().value_unsafe();
  REQUIRE(arr.size() == 3);
  std::vector<std::string> bodies;
  for (auto b : arr) bodies.push_back(llmx::json::to_text(b));
  CHECK(contains(bodies[0], R"("tools")"));
  CHECK_FALSE(contains(bodies[1], R"("tools")"));
  CHECK(contains(bodies[1], "Summarise please."));
  CHECK(contains(bodies[2], "Hello from mock-llm"));  // the summary (the compaction's answer)
  CHECK(contains(bodies[2], "big task ZEBRA"));       // user messages survive compaction
  auto files = rollout_files(home.file("sessions"));
  REQUIRE(files.size() == 1);
  auto text = read_file(files[0]);
  CHECK(count_of(text, R"("type":"compacted")") == 1);
  CHECK_FALSE(contains(text, "Summarise please."));  // the prompt is never recorded

  auto again = run_llmx({"exec", "--skip-git-repo-check", "resume", "--last", "continue @mock:text deltas=1"}, env);
  INFO("stderr: " << again.err);
  REQUIRE(again.status.ok());
  auto last = last_request_text(mock);
  CHECK(contains(last, "big task ZEBRA"));
  CHECK(contains(last, "Hello from mock-llm"));
}

TEST_CASE("threads: a rollout that cannot be written is told to the client once, and the turn goes on") {
  // A listener, not `llmx exec`: the store's failure can reach the conversation after its turn
  // ended, and exec stops listening there; a client that listens sees it whenever it comes.
  AppServerFixture s;
  s.initialize();
  {  // `sessions` is a file: no rollout directory can be made (as with a full or read-only disk)
    std::ofstream blocker(s.home.file("sessions"));
    blocker << "not a directory\n";
  }
  auto conv = s.call("newConversation", "{}");
  REQUIRE_FALSE(conv.is_error());
  auto id = conv.str("/result/conversationId");
  REQUIRE_FALSE(s.call("addConversationListener", R"({"conversationId":")" + id + R"("})").is_error());
  auto sent = s.call("sendUserMessage", R"({"conversationId":")" + id +
                                            R"(","items":[{"type":"text","data":{"text":"@mock:text deltas=2"}}]})");
  REQUIRE_FALSE(sent.is_error());
  auto warning = s.c.wait_for([](const Message& m) { return contains(m.line(), "could not be saved"); },
                              "the warning that the rollout could not be saved");
  CHECK(contains(warning.line(), "sessions"));  // says which file
  s.c.wait_for([](const Message& m) { return m.method() == "llmx/event/task_complete"; }, "task_complete");
  s.c.drain(std::chrono::milliseconds(300));
  size_t warnings = 0;
  for (const auto& m : s.c.log()) warnings += contains(m.line(), "could not be saved") ? 1 : 0;
  CHECK(warnings == 1);
  bool answered = false;
  for (const auto& m : s.c.log()) answered = answered || contains(m.line(), "Hello from mock-llm");
  CHECK(answered);  // the turn went on
}
