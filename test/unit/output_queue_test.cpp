#include <doctest/doctest.h>

#include <string>

#include "transport/output_queue.hpp"

using llmx::OutputQueue;

namespace {
// Writes everything queued, `step` bytes at a time (a slow reader takes little per write).
std::string drain(OutputQueue& q, size_t step) {
  std::string out;
  while (!q.empty()) {
    auto chunk = q.next();
    REQUIRE_FALSE(chunk.empty());
    const size_t n = std::min(step, chunk.size());
    out.append(chunk.substr(0, n));
    q.consumed(n);
  }
  return out;
}
}  // namespace

TEST_CASE("output queue: lines in order, and replies ahead go before queued lines in their own order") {
  OutputQueue q;
  CHECK(q.empty());
  CHECK(q.next().empty());
  q.push("n1");
  q.push("n2");
  q.push_ahead("r1");
  q.push_ahead("r2");
  CHECK(q.size() == 12);
  CHECK(drain(q, 1000) == "r1\nr2\nn1\nn2\n");
  CHECK(q.empty());
}

TEST_CASE("output queue: a reply never lands inside a line that has started") {
  OutputQueue q;
  q.push("notification-one");
  q.push("notification-two");
  auto first = q.next();
  q.consumed(5);  // "notif" is out
  (void)first;
  q.push_ahead("reply");
  // The started line is finished first, then the reply, then the rest.
  CHECK(q.next() == "ication-one\n");
  CHECK(drain(q, 3) == "ication-one\nreply\nnotification-two\n");
}

TEST_CASE("output queue: a reply that has started is finished before queued lines resume") {
  OutputQueue q;
  q.push("n1");
  q.push_ahead("reply-long");
  q.consumed(3);  // "rep"
  q.push("n2");
  q.push_ahead("r2");
  CHECK(drain(q, 2) == "ly-long\nr2\nn1\nn2\n");
}

TEST_CASE("output queue: a long backlog written in small steps keeps every byte, replies at line boundaries") {
  OutputQueue q;
  std::string expected_lines;
  for (int i = 0; i < 50000; ++i) {
    std::string line = "{\"n\":" + std::to_string(i) + ",\"pad\":\"" + std::string(40, 'x') + "\"}";
    q.push(line);
    expected_lines += line + "\n";
  }
  std::string out;
  int replies = 0;
  while (!q.empty()) {
    auto chunk = q.next();
    const size_t n = std::min<size_t>(chunk.size(), 7777);
    out.append(chunk.substr(0, n));
    q.consumed(n);
    if (replies < 100 && out.size() % 3 == 0) {
      q.push_ahead("{\"reply\":" + std::to_string(replies++) + "}");
    }
  }
  // Take the replies out: what remains is the backlog, whole and in order.
  std::string rest;
  size_t pos = 0, found = 0;
  while (pos < out.size()) {
    auto end = out.find('\n', pos);
    REQUIRE(end != std::string::npos);
    auto line = out.substr(pos, end + 1 - pos);
    if (line.starts_with("{\"reply\":")) {
      ++found;
    } else {
      REQUIRE(line.starts_with("{\"n\":"));  // never a reply spliced into a line
      rest += line;
    }
    pos = end + 1;
  }
  CHECK(found == static_cast<size_t>(replies));
  CHECK(rest == expected_lines);
}

TEST_CASE("output queue: a written-out backlog gives its memory back, a small one keeps its room") {
  OutputQueue q;
  const std::string line(1000, 'x');
  for (int i = 0; i < 4000; ++i) q.push(line);  // 4 MB behind
  CHECK(q.held() > 3 * OutputQueue::kKeptBytes);
  drain(q, 64 * 1024);
  CHECK(q.empty());
  CHECK(q.held() <= OutputQueue::kKeptBytes);
  for (int i = 0; i < 100; ++i) q.push(line);  // 100 KB: room stays for the next lines
  const size_t room = q.held();
  drain(q, 4096);
  const size_t kept = q.held();
  CHECK(kept > 0);
  CHECK(kept <= room);
  for (int i = 0; i < 50; ++i) q.push(line);  // they fit the kept room: nothing new is held
  CHECK(q.held() == kept);
  drain(q, 4096);
  for (int i = 0; i < 2000; ++i) q.push_ahead(line);  // replies too
  drain(q, 64 * 1024);
  CHECK(q.held() <= OutputQueue::kKeptBytes + room);
}

TEST_CASE("output queue: clear drops everything") {
  OutputQueue q;
  q.push("a");
  q.push_ahead("b");
  q.clear();
  CHECK(q.empty());
  CHECK(q.size() == 0);
  CHECK(q.next().empty());
}

TEST_CASE("pause marks: behind past the mark, caught up only below a quarter of it") {
  llmx::PauseMarks marks(1000);
  CHECK_FALSE(marks.update(1000));  // at the mark: not yet
  CHECK(marks.update(1001) == true);
  CHECK_FALSE(marks.update(5000));  // still behind: no news
  CHECK_FALSE(marks.update(251));   // read most of it, but not down to a quarter
  CHECK(marks.update(250) == false);
  CHECK_FALSE(marks.behind());
  CHECK_FALSE(marks.update(900));   // below the mark again: no news
}

TEST_CASE("output queue: a large line is kept as it came, small ones are joined into one write") {
  OutputQueue q;
  std::string big(OutputQueue::kJoinBelow + 10, 'x');
  big.reserve(big.size() + 1);  // room for the newline: the queue takes the buffer itself
  const char* bytes = big.data();
  q.push(std::move(big));
  CHECK(q.next().data() == bytes);
  CHECK(q.next().size() == OutputQueue::kJoinBelow + 11);
  q.consumed(q.next().size());
  for (int i = 0; i < 100; ++i) q.push("line" + std::to_string(i));
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += "line" + std::to_string(i) + "\n";
  CHECK(q.next() == expected);  // one buffer: one write takes them all
  q.consumed(q.next().size());
  CHECK(q.empty());
}
