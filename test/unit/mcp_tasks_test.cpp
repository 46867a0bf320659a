// The MCP task book (protocol/rpc/mcp_tasks.hpp): ttl limits, owners, terminal states, pages and
// expiry, without actors.
#include <doctest/doctest.h>

#include <set>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/mcp_tasks.hpp"

using namespace llmx;
using namespace std::chrono_literals;
using mcp::TaskBook;
using mcp::TaskStatus;

TEST_CASE("mcp task book: ids are random UUIDs, the ttl is kept within the limits") {
  TaskBook book;
  auto now = TaskBook::Clock::now();
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(book.create("", 60000, now).id);
  CHECK(ids.size() == 100);
  CHECK(ids.begin()->size() == 36);
  CHECK((*ids.begin())[14] == '4');
  CHECK(book.create("", 1, now).ttl == 1min);                  // too short: the minimum
  CHECK(book.create("", std::nullopt, now).ttl == 1h);         // none asked: the default
  CHECK(book.create("", int64_t(1) << 40, now).ttl == 24h);    // too long: the maximum
}

TEST_CASE("mcp task book: an owner sees only its tasks, and a terminal status never changes") {
  TaskBook book;
  auto now = TaskBook::Clock::now();
  auto& t = book.create("alice", std::nullopt, now);
  CHECK(book.find(t.id, "alice"));
  CHECK_FALSE(book.find(t.id, "bob"));
  CHECK_FALSE(book.find("nope", "alice"));
  CHECK(book.update(t, TaskStatus::input_required, now + 1s, "asking"));
  CHECK(book.update(t, TaskStatus::working, now + 2s));
  CHECK(book.update(t, TaskStatus::cancelled, now + 3s));
  CHECK_FALSE(book.update(t, TaskStatus::working, now + 4s));
  book.finish(t, {R"({"late":true})", false}, now + 5s);  // the turn ended after the cancel
  CHECK(t.status == TaskStatus::cancelled);
  CHECK(t.updated == now + 3s);
}

TEST_CASE("mcp task book: the listing pages in creation order and refuses foreign cursors") {
  TaskBook::Limits limits;
  limits.page_size = 2;
  TaskBook book(limits);
  auto now = TaskBook::Clock::now();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(book.create("", std::nullopt, now).id);  // same millisecond
  book.create("other", std::nullopt, now);
  std::vector<std::string> seen;
  std::optional<std::string> cursor;
  do {
    auto page = book.list("", cursor);
    REQUIRE(page);
    for (const auto* t : page->tasks) seen.push_back(t->id);
    cursor = page->next_cursor;
  } while (cursor);
  CHECK(seen == ids);
  CHECK_FALSE(book.list("", std::string("garbage")));
  CHECK_FALSE(book.list("", std::string("12.x")));
}

TEST_CASE("mcp task book: ended tasks go after their ttl and a grace, running ones never") {
  TaskBook book;
  auto now = TaskBook::Clock::now();
  auto running = book.create("", 60000, now).id;
  auto& done = book.create("", 60000, now);
  book.finish(done, {"{}", false}, now + 10s);
  CHECK(done.status == TaskStatus::completed);
  CHECK(book.expire(now + 69s).empty());  // ttl passed, but ended only 59 s ago
  const std::string done_id = done.id;     // `done` goes with the expiry (ASan caught the read after it)
  CHECK(book.expire(now + 71s) == std::vector<std::string>{done_id});
  CHECK(book.expire(now + 48h).empty());  // still running: kept
  CHECK(book.get(running));
  // One that ran past its ttl is kept a grace period after it ended.
  auto& late = *book.get(running);
  book.finish(late, {"{}", true}, now + 2h);
  CHECK(late.status == TaskStatus::failed);
  CHECK(book.expire(now + 2h + 30s).empty());
  CHECK(book.expire(now + 2h + 61s).size() == 1);
  CHECK(book.size() == 0);
}

TEST_CASE("mcp task book: a task's fields follow the 2025-11-25 Task and the 2026 extension's shapes") {
  TaskBook book;
  auto& t = book.create("", 90000, TaskBook::Clock::time_point{} + 1700000000s);
  auto v = mcp::view_of(t, 500ms);
  auto text = mcp::task_2025(v);
  CHECK(text.find(R"("status":"working")") != std::string::npos);
  CHECK(text.find(R"("createdAt":"2023-11-14T22:13:20.000Z")") != std::string::npos);
  CHECK(text.find(R"("ttl":90000)") != std::string::npos);
  CHECK(text.find(R"("pollInterval":500)") != std::string::npos);
  auto flat = mcp::create_task_2026(v);
  CHECK(flat.find(R"("resultType":"task",)") != std::string::npos);
  CHECK(flat.find(R"("ttlMs":90000)") != std::string::npos);
  CHECK(flat.find(R"("pollIntervalMs":500)") != std::string::npos);
  CHECK(flat.find(R"("io.modelcontextprotocol/serverInfo":{"name":"llmx-mcp-server")") != std::string::npos);
  // A question while it waits; the answer once it has ended (an error result is `completed`).
  v.status = "input_required";
  v.questions = {{"call_1", R"({"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}})"}};
  CHECK(mcp::task_get_2026(v).find(R"("inputRequests":{"call_1":{"method":"elicitation/create","params":{"mode":"form")") !=
        std::string::npos);
  v.status = "failed";
  v.questions.clear();
  v.result = R"({"content":[],"isError":true})";
  auto got = mcp::task_get_2026(v);
  CHECK(got.find(R"("status":"completed")") != std::string::npos);
  CHECK(got.find(R"("result":{"resultType":"complete",)") != std::string::npos);
  // 2025: the answer is tagged with its task.
  CHECK(mcp::task_result_2025(v).starts_with(R"({"_meta":{"io.modelcontextprotocol/related-task":{"taskId":")"));
}
