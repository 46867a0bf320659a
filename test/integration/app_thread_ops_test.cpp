// `llmx app-server` v2 thread operations through the real binary (issue 17): thread/read with
// turns, thread/name/set, thread/fork, thread/rollback, thread/unarchive, thread/loaded/list,
// turn/steer, config/read and command/exec. The traffic goes through the schema check
// (js/server_traffic_matches_schema) like every app-server test.
#include <doctest/doctest.h>

#include "protocol/base/base64.hpp"
#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

using AppServer = AppServerFixture;


std::string thread_param(const std::string& id, std::string_view more = {}) {
  return R"({"threadId":")" + id + "\"" + (more.empty() ? "" : "," + std::string(more)) + "}";
}

// One finished turn with this text; returns its turn/completed.
Message run_turn(AppServer& s, const std::string& thread, const std::string& text) {
  auto before = s.c.log().size();
  auto id = s.c.request("turn/start", thread_param(thread, R"("input":[{"type":"text","text":")" + text + R"("}])"));
  REQUIRE_FALSE(s.c.wait_for_response(id).is_error());
  return s.c.wait_for([&](const Message& m) { return m.index() >= before && is_method(m, "turn/completed"); },
                      "turn/completed");
}

// The text of every user message the model saw in its last request.
std::string last_request(MockLlm& mock) {
  auto requests = recorded_requests(mock);
  auto n = array_size(requests, "/requests");
  REQUIRE(n > 0);
  return requests.text("/requests/" + std::to_string(n - 1));
}

}  // namespace

TEST_CASE("app-server v2: thread/read shows turns, thread/name/set names the thread, thread/fork copies it") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  run_turn(s, thread, "remember OTTER @mock:text deltas=1");

  auto named = s.call("thread/name/set", thread_param(thread, R"("name":"  Otter notes  ")"));
  CHECK(named.text("/result") == "{}");
  auto updated = s.c.wait_for([](const Message& m) { return is_method(m, "thread/name/updated"); }, "name updated");
  CHECK(updated.str("/params/threadId") == thread);
  CHECK(updated.str("/params/threadName") == "Otter notes");
  CHECK(s.call("thread/name/set", thread_param(thread, R"("name":"   ")")).str("/error/message") ==
        "thread name must not be empty");

  auto read = s.call("thread/read", thread_param(thread, R"("includeTurns":true)"));
  INFO(read.line());
  CHECK(read.str("/result/thread/id") == thread);
  CHECK(read.str("/result/thread/name") == "Otter notes");
  CHECK(read.str("/result/thread/status/type") == "idle");
  CHECK(read.str("/result/thread/preview") == "remember OTTER @mock:text deltas=1");
  CHECK(read.str("/result/thread/cwd") != "");
  REQUIRE(array_size(read, "/result/thread/turns") == 1);
  CHECK(read.str("/result/thread/turns/0/status") == "completed");
  CHECK(read.str("/result/thread/turns/0/items/0/type") == "userMessage");
  CHECK(read.str("/result/thread/turns/0/items/0/content/0/text") == "remember OTTER @mock:text deltas=1");
  CHECK(read.str("/result/thread/turns/0/items/1/type") == "agentMessage");
  auto bare = s.call("thread/read", thread_param(thread));
  CHECK(array_size(bare, "/result/thread/turns") == 0);
  auto listed = s.call("thread/list", "{}");
  CHECK(listed.str("/result/data/0/name") == "Otter notes");  // the index knows the title
  CHECK(listed.str("/result/data/0/status/type") == "idle");

  auto fork_id = s.c.request("thread/fork", thread_param(thread, R"("model":"forked-model")"));
  auto started = s.c.wait_for([](const Message& m) { return is_method(m, "thread/started"); }, "thread/started", 10s);
  auto fork = s.c.wait_for_response(fork_id);
  INFO(fork.line());
  REQUIRE_FALSE(fork.is_error());
  auto copy = fork.str("/result/thread/id");
  CHECK(copy != thread);
  CHECK(fork.index() < s.c.log().back().index() + 1);
  CHECK(fork.str("/result/model") == "forked-model");
  CHECK(fork.at("/result/thread/name").is_null());  // the title stays with the original
  CHECK(array_size(fork, "/result/thread/turns") == 1);
  CHECK(fork.str("/result/thread/preview") == "remember OTTER @mock:text deltas=1");
  // thread/started for the fork comes after its reply (P10); the first one was the original's.
  auto fork_started = s.c.wait_for(
      [&](const Message& m) { return is_method(m, "thread/started") && m.str("/params/thread/id") == copy; },
      "fork's thread/started");
  CHECK(fork_started.index() > fork.index());
  CHECK(started.index() < fork.index());

  // The fork continues from the copied history; the original is untouched.
  run_turn(s, copy, "what did I say? @mock:text deltas=1");
  CHECK(contains(last_request(s.mock), "remember OTTER"));
  CHECK(array_size(s.call("thread/read", thread_param(copy, R"("includeTurns":true)")), "/result/thread/turns") == 2);
  CHECK(array_size(s.call("thread/read", thread_param(thread, R"("includeTurns":true)")), "/result/thread/turns") == 1);
  auto list = s.call("thread/list", "{}");
  CHECK(array_size(list, "/result/data") == 2);

  CHECK(s.call("thread/read", R"({"threadId":"nope"})").str("/error/message") == "invalid thread id: nope");
  auto missing = s.call("thread/read", R"({"threadId":"0194f1b2-0000-7000-8000-000000000009"})");
  CHECK(missing.integer("/error/code") == -32600);
  CHECK(s.call("thread/fork", R"({"threadId":"0194f1b2-0000-7000-8000-000000000009"})").integer("/error/code") == -32600);
}

TEST_CASE("app-server v2: thread/rollback drops the last turns for the model, the turn list and a resume") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  run_turn(s, thread, "first ALPHA @mock:text deltas=1");
  run_turn(s, thread, "second BRAVO @mock:text deltas=1");
  run_turn(s, thread, "third CHARLIE @mock:text deltas=1");

  CHECK(s.call("thread/rollback", thread_param(thread, R"("numTurns":0)")).str("/error/message") ==
        "numTurns must be >= 1");
  auto back = s.call("thread/rollback", thread_param(thread, R"("numTurns":2)"));
  INFO(back.line());
  REQUIRE_FALSE(back.is_error());
  REQUIRE(array_size(back, "/result/thread/turns") == 1);
  CHECK(contains(back.text("/result/thread/turns/0"), "ALPHA"));

  run_turn(s, thread, "fourth DELTA @mock:text deltas=1");
  auto seen = last_request(s.mock);
  CHECK(contains(seen, "ALPHA"));
  CHECK_FALSE(contains(seen, "BRAVO"));
  CHECK_FALSE(contains(seen, "CHARLIE"));

  // A running turn cannot be rolled back.
  s.c.request("turn/start", thread_param(thread, R"("input":[{"type":"text","text":"@mock:hang"}])"));
  s.c.wait_for([](const Message& m) { return is_method(m, "llmx/event/task_started"); }, "task_started");
  auto busy = s.call("thread/rollback", thread_param(thread, R"("numTurns":1)"));
  CHECK(busy.str("/error/message") == "Cannot rollback while a turn is in progress.");
  auto running = s.call("thread/read", thread_param(thread, R"("includeTurns":true)"));
  CHECK(running.str("/result/thread/status/type") == "active");
  auto last = array_size(running, "/result/thread/turns") - 1;
  CHECK(running.str("/result/thread/turns/" + std::to_string(last) + "/status") == "inProgress");
  s.call("turn/interrupt", thread_param(thread, R"("turnId":"x")"));

  // Another server resumes the thread without the dropped turns.
  AppServer other;
  McpClient c2(s.home.path(), s.mock.url(), McpOptions{"app-server", {}, {}, {}});
  c2.wait_for_response(c2.request("initialize", R"({"clientInfo":{"name":"t","version":"1"}})"));
  auto resumed = c2.wait_for_response(c2.request("thread/resume", thread_param(thread)));
  INFO(resumed.line());
  std::string turns = resumed.text("/result/thread/turns");
  CHECK(contains(turns, "ALPHA"));
  CHECK(contains(turns, "DELTA"));
  CHECK_FALSE(contains(turns, "BRAVO"));
}

TEST_CASE("app-server v2: a rollback stops at the last compaction, which summarised the turns before it") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  run_turn(s, thread, "first ALPHA @mock:text deltas=1");
  run_turn(s, thread, "second BRAVO @mock:text deltas=1");
  auto before = s.c.log().size();
  s.call("thread/compact", thread_param(thread));
  s.c.wait_for([&](const Message& m) { return m.index() >= before && is_method(m, "turn/completed"); }, "compaction");
  auto none = s.call("thread/rollback", thread_param(thread, R"("numTurns":1)"));
  CHECK(none.str("/error/message") == "no turn to roll back since the thread was last compacted");
  run_turn(s, thread, "third CHARLIE @mock:text deltas=1");
  auto turns_before = array_size(s.call("thread/read", thread_param(thread, R"("includeTurns":true)")), "/result/thread/turns");
  auto back = s.call("thread/rollback", thread_param(thread, R"("numTurns":5)"));
  INFO(back.line());
  REQUIRE_FALSE(back.is_error());
  CHECK(array_size(back, "/result/thread/turns") == turns_before - 1);  // only the turn since the compaction
  CHECK_FALSE(contains(back.text("/result/thread/turns"), "CHARLIE"));
  run_turn(s, thread, "fourth DELTA @mock:text deltas=1");
  auto seen = last_request(s.mock);
  CHECK(contains(seen, "ALPHA"));  // the compacted history is intact
  CHECK_FALSE(contains(seen, "CHARLIE"));
}

TEST_CASE("app-server v2: turn/steer adds input to the running turn") {
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  auto none = s.call("turn/steer", thread_param(thread, R"("input":[{"type":"text","text":"x"}],"expectedTurnId":"0")"));
  CHECK(none.str("/error/message") == "no active turn to steer");
  CHECK(s.call("turn/steer", thread_param(thread, R"("input":[],"expectedTurnId":"")")).str("/error/message") ==
        "expectedTurnId must not be empty");

  auto start = s.call("turn/start", thread_param(thread, R"("input":[{"type":"text","text":"@mock:slow delay_ms=250"}])"));
  auto turn_id = start.str("/result/turn/id");
  s.c.wait_for([](const Message& m) { return is_method(m, "llmx/event/task_started"); }, "task_started");
  auto wrong = s.call("turn/steer", thread_param(thread, R"("input":[{"type":"text","text":"x"}],"expectedTurnId":"99")"));
  CHECK(wrong.str("/error/message") == "expected active turn id `99` but found `" + turn_id + "`");
  auto empty = s.call("turn/steer", thread_param(thread, R"("input":[],"expectedTurnId":")" + turn_id + "\""));
  CHECK(empty.str("/error/message") == "input must not be empty");
  auto steered = s.call("turn/steer", thread_param(thread, R"("input":[{"type":"text","text":"also STEERED @mock:text deltas=1"}],"expectedTurnId":")" +
                                                               turn_id + "\""));
  INFO(steered.line());
  CHECK(steered.str("/result/turnId") == turn_id);
  auto done = s.c.wait_for([](const Message& m) { return is_method(m, "turn/completed"); }, "turn/completed");
  CHECK(done.str("/params/turn/id") == turn_id);
  CHECK(contains(last_request(s.mock), "also STEERED"));
  size_t completions = 0;
  for (const auto& m : s.c.log()) completions += is_method(m, "turn/completed");
  CHECK(completions == 1);  // one turn, not a second one
}

TEST_CASE("app-server v2: thread/loaded/list pages the live threads, archive and unarchive notify") {
  AppServer s;
  s.initialize();
  auto a = s.start_thread();
  auto b = s.start_thread();
  auto all = s.call("thread/loaded/list", "{}");
  REQUIRE(array_size(all, "/result/data") == 2);
  CHECK(all.str("/result/data/0") == std::min(a, b));
  CHECK(all.at("/result/nextCursor").is_null());
  auto page = s.call("thread/loaded/list", R"({"limit":1})");
  REQUIRE(array_size(page, "/result/data") == 1);
  auto next = s.call("thread/loaded/list", R"({"limit":1,"cursor":")" + page.str("/result/nextCursor") + "\"}");
  CHECK(next.str("/result/data/0") == std::max(a, b));
  CHECK(s.call("thread/loaded/list", R"({"cursor":"bad"})").str("/error/message") == "invalid cursor: bad");

  run_turn(s, a, "keep me @mock:text deltas=1");
  auto archive_id = s.c.request("thread/archive", thread_param(a));
  auto archived = s.c.wait_for([](const Message& m) { return is_method(m, "thread/archived"); }, "thread/archived");
  CHECK(archived.str("/params/threadId") == a);
  CHECK(s.c.wait_for_response(archive_id).index() < archived.index());
  CHECK(array_size(s.call("thread/list", "{}"), "/result/data") == 0);
  auto loaded = s.call("thread/loaded/list", "{}");
  CHECK(array_size(loaded, "/result/data") == 1);

  auto unarchive_id = s.c.request("thread/unarchive", thread_param(a));
  auto back = s.c.wait_for_response(unarchive_id);
  INFO(back.line());
  CHECK(back.str("/result/thread/id") == a);
  CHECK(back.str("/result/thread/preview") == "keep me @mock:text deltas=1");
  CHECK(back.str("/result/thread/status/type") == "notLoaded");
  auto unarchived = s.c.wait_for([](const Message& m) { return is_method(m, "thread/unarchived"); }, "thread/unarchived");
  CHECK(unarchived.index() > back.index());
  CHECK(array_size(s.call("thread/list", "{}"), "/result/data") == 1);
  CHECK(s.call("thread/unarchive", thread_param(a)).integer("/error/code") == -32600);
}

TEST_CASE("app-server v2: config/read shows the effective settings and where each came from") {
  AppServerFixture s(McpOptions{"app-server", {"-c", "model=\"from-flag\""}, {}, {}});
  s.home.write("config.toml", "model = \"from-file\"\n[sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n");
  s.initialize();
  auto r = s.call("config/read", R"({"includeLayers":true})");
  INFO(r.line());
  CHECK(r.str("/result/config/model") == "from-flag");
  CHECK(r.str("/result/config/sandbox_workspace_write/writable_roots/0") == "/a");
  CHECK(r.at("/result/config/review_model").is_null());
  CHECK(r.str("/result/origins/model/name/type") == "sessionFlags");
  CHECK(r.str("/result/origins/sandbox_workspace_write.writable_roots.0/name/type") == "user");
  CHECK(r.str("/result/origins/sandbox_workspace_write.writable_roots.0/name/file") == s.home.file("config.toml"));
  CHECK(r.str("/result/layers/0/name/type") == "sessionFlags");
  CHECK(r.str("/result/layers/1/config/model") == "from-file");
  CHECK(r.str("/result/layers/1/version").starts_with("sha256:"));
  CHECK_FALSE(s.call("config/read", "{}").has("/result/layers"));
  CHECK(s.call("config/read", R"({"cwd":"/no/such/dir"})").integer("/error/code") == -32603);
}

TEST_CASE("app-server v2: command/exec runs a one-off command, streams it, times out and terminates") {
  AppServer s;
  s.initialize();
  auto plain = s.call("command/exec", R"({"command":["sh","-c","echo out; echo err >&2; exit 3"],"cwd":")" +
                                          s.work.path() + R"("})");
  INFO(plain.line());
  CHECK(plain.integer("/result/exitCode") == 3);
  CHECK(plain.str("/result/stdout") == "out\n");
  CHECK(plain.str("/result/stderr") == "err\n");
  CHECK(s.call("command/exec", R"({"command":["printf","abcdef"],"outputBytesCap":3})").str("/result/stdout") == "abc");
  // A long output is cut at the cap, not spliced from its head and tail.
  std::string numbers;
  for (int i = 1; i <= 400000; ++i) numbers += std::to_string(i) + "\n";
  auto long_out = s.call("command/exec", R"({"command":["seq","1","400000"],"outputBytesCap":1500000})");
  CHECK(long_out.str("/result/stdout") == numbers.substr(0, 1500000));
  CHECK(s.call("command/exec", R"({"command":["sh","-c","echo $LLMX_T","x"],"env":{"LLMX_T":"set"}})")
            .str("/result/stdout") == "set\n");

  auto streamed_id = s.c.request("command/exec", R"({"command":["sh","-c","echo one; sleep 0.2; echo two"],"processId":"p1","streamStdoutStderr":true})");
  auto streamed = s.c.wait_for_response(streamed_id);
  CHECK(streamed.integer("/result/exitCode") == 0);
  CHECK(streamed.str("/result/stdout") == "");  // streamed output is not repeated
  std::string out;
  for (const auto& m : s.c.log())
    if (is_method(m, "command/exec/outputDelta")) {
      CHECK(m.str("/params/processId") == "p1");
      CHECK(m.index() < streamed.index());
      if (m.str("/params/stream") == "stdout") out += llmx::base64::decode(m.str("/params/deltaBase64")).value_or("?");
    }
  CHECK(out == "one\ntwo\n");

  CHECK(s.call("command/exec", R"({"command":["sleep","5"],"timeoutMs":200})").integer("/result/exitCode") == 124);
  auto long_id = s.c.request("command/exec", R"({"command":["sleep","30"],"processId":"p2"})");
  std::this_thread::sleep_for(200ms);
  CHECK(s.call("command/exec", R"({"command":["true"],"processId":"p2"})").str("/error/message") ==
        "duplicate active command/exec process id: p2");
  CHECK(s.call("command/exec/terminate", R"({"processId":"p2"})").text("/result") == "{}");
  CHECK(s.c.wait_for_response(long_id, 10s).integer("/result/exitCode") == 137);
  CHECK(s.call("command/exec/terminate", R"({"processId":"p2"})").str("/error/message") ==
        "no active command/exec for process id \"p2\"");
  CHECK(s.call("command/exec", R"({"command":[]})").str("/error/message") == "command must not be empty");
  CHECK(s.call("command/exec", R"({"command":["true"],"streamStdoutStderr":true})").integer("/error/code") == -32600);
}

TEST_CASE("app-server v2: a thread named before anyone spoke in it keeps its name once it is listed") {
  // Its rollout file is made with its first user message (the lazy file): the name must not be
  // lost before then.
  AppServer s;
  s.initialize();
  auto thread = s.start_thread();
  CHECK(s.call("thread/name/set", thread_param(thread, R"("name":"Early name")")).text("/result") == "{}");
  run_turn(s, thread, "hello @mock:text deltas=1");
  auto listed = s.call("thread/list", "{}");
  INFO(listed.line());
  REQUIRE(array_size(listed, "/result/data") == 1);
  CHECK(listed.str("/result/data/0/id") == thread);
  CHECK(listed.str("/result/data/0/name") == "Early name");
}
