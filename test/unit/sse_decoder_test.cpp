// Unit tests for the incremental text/event-stream decoder (engine.md §2.5): the same bytes give
// the same events however they are split, every line ending is understood, and the size limit
// stops a runaway stream.
#include "transport/sse_decoder.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using llmx::sse::Decoder;

namespace {

// One event as "event|data", so whole sequences compare (and print) as strings.
std::string show(const llmx::sse::Event& e) { return e.event + "|" + e.data; }

// Feeds `parts` one after the other, then finishes the stream.
std::vector<std::string> decode(const std::vector<std::string>& parts, bool finish = true) {
  Decoder d;
  std::vector<std::string> out;
  auto sink = [&](llmx::sse::Event&& e) { out.push_back(show(e)); };
  bool ok = true;
  for (const auto& p : parts) ok = d.feed(p, sink) && ok;
  if (finish) d.finish(sink);
  if (!ok) out.push_back("<feed failed>");  // makes the comparison fail
  return out;
}

std::vector<std::string> decode_whole(const std::string& s) { return decode({s}); }

std::vector<std::string> decode_bytewise(const std::string& s) {
  std::vector<std::string> parts;
  for (char c : s) parts.emplace_back(1, c);
  return decode(parts);
}

// A stream exercising every rule at once: comments, event/id/retry lines, all three line
// endings, multi-line data, a field without a colon, and a last event without its blank line.
const std::string kStream =
    ": keep-alive comment\n"
    "event: message\n"
    "id: 7\n"
    "retry: 1000\n"
    "data: {\"a\":1}\n"
    "\n"
    "data: line1\r\n"
    "data: line2\r\n"
    "data:  two spaces\r\n"
    "\r\n"
    "data:nospace\r"
    "\r"
    "event: lonely\n"  // an event type without data: nothing dispatched, type reset
    "\n"
    "data: after\n"
    "\n"
    ":another comment\r\n"
    "event: ping\r"
    "data\r"  // a field name alone: data with an empty value
    "\r"
    "data: last";

const std::vector<std::string> kExpected = {
    "message|{\"a\":1}",
    "|line1\nline2\n two spaces",
    "|nospace",
    "|after",
    "ping|",
    "|last",
};

}  // namespace

TEST_CASE("sse: a multi-event stream decodes into the expected events") {
  CHECK(decode_whole(kStream) == kExpected);
}

TEST_CASE("sse: the same events come out byte by byte") {
  CHECK(decode_bytewise(kStream) == kExpected);
}

TEST_CASE("sse: the same events come out for a split at every byte position") {
  for (size_t i = 0; i <= kStream.size(); ++i) {
    CAPTURE(i);
    CHECK(decode({kStream.substr(0, i), kStream.substr(i)}) == kExpected);
  }
}

TEST_CASE("sse: the same events come out for every pair of split positions") {
  size_t failures = 0;
  for (size_t i = 0; i <= kStream.size(); ++i) {
    for (size_t j = i; j <= kStream.size(); ++j) {
      auto got = decode({kStream.substr(0, i), kStream.substr(i, j - i), kStream.substr(j)});
      if (got != kExpected) {
        ++failures;
        if (failures < 5) {  // report a few, not thousands
          CAPTURE(i);
          CAPTURE(j);
          CHECK(got == kExpected);
        }
      }
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("sse: empty feeds change nothing") {
  std::vector<std::string> parts;
  for (char c : kStream) {
    parts.emplace_back();
    parts.emplace_back(1, c);
  }
  parts.emplace_back();
  CHECK(decode(parts) == kExpected);
}

TEST_CASE("sse: each line ending style terminates lines and events") {
  CHECK(decode_whole("data: a\n\ndata: b\n\n") == std::vector<std::string>{"|a", "|b"});
  CHECK(decode_whole("data: a\r\n\r\ndata: b\r\n\r\n") == std::vector<std::string>{"|a", "|b"});
  CHECK(decode_whole("data: a\r\rdata: b\r\r") == std::vector<std::string>{"|a", "|b"});
  // Mixed within one event.
  CHECK(decode_whole("data: a\rdata: b\r\ndata: c\n\r\n") == std::vector<std::string>{"|a\nb\nc"});
}

TEST_CASE("sse: a \\r\\n split across feeds is one line ending, not two") {
  // If the \n after a \r from the previous feed were taken as a blank line, "a" and "b" would
  // become two events.
  CHECK(decode({"data: a\r", "\ndata: b\r\n\r\n"}) == std::vector<std::string>{"|a\nb"});
  CHECK(decode({"data: a\r", "\n", "data: b\r", "\n", "\r", "\n"}) == std::vector<std::string>{"|a\nb"});
  // A lone \r at the end of a feed followed by a real blank line (\r) ends the event.
  CHECK(decode({"data: a\r", "\rdata: b\n\n"}) == std::vector<std::string>{"|a", "|b"});
  // \r then an empty feed then \n: still one line ending.
  CHECK(decode({"data: a\r", "", "\ndata: b\n\n"}) == std::vector<std::string>{"|a\nb"});
}

TEST_CASE("sse: multi-line data is joined with \\n and keeps empty lines") {
  CHECK(decode_whole("data: one\ndata: two\ndata: three\n\n") ==
        std::vector<std::string>{"|one\ntwo\nthree"});
  CHECK(decode_whole("data: one\ndata:\ndata: three\n\n") == std::vector<std::string>{"|one\n\nthree"});
  CHECK(decode_whole("data: {\"x\":\n data: 1}\n\n").size() == 1);  // " data" is not a data field
}

TEST_CASE("sse: only one leading space is stripped from a value") {
  CHECK(decode_whole("data:x\n\n") == std::vector<std::string>{"|x"});
  CHECK(decode_whole("data: x\n\n") == std::vector<std::string>{"|x"});
  CHECK(decode_whole("data:   x \n\n") == std::vector<std::string>{"|  x "});
  CHECK(decode_whole("data: a: b\n\n") == std::vector<std::string>{"|a: b"});  // later colons kept
}

TEST_CASE("sse: comments, id and retry lines are ignored, event names are kept per event") {
  CHECK(decode_whole(":hello\n: world\n\n").empty());
  CHECK(decode_whole("id: 1\nretry: 5\n\n").empty());
  CHECK(decode_whole("id: 1\nretry: 5\ndata: x\nid: 2\n\n") == std::vector<std::string>{"|x"});
  CHECK(decode_whole("event: a\ndata: 1\n\ndata: 2\n\n") == std::vector<std::string>{"a|1", "|2"});
  CHECK(decode_whole("event: a\nevent: b\ndata: 1\n\n") == std::vector<std::string>{"b|1"});
  CHECK(decode_whole("data: 1\nevent: late\n\n") == std::vector<std::string>{"late|1"});
  CHECK(decode_whole("unknown: field\ndata: 1\n\n") == std::vector<std::string>{"|1"});
  CHECK(decode_whole("event: ghost\n\ndata: 1\n\n") == std::vector<std::string>{"|1"});
}

TEST_CASE("sse: blank lines without data dispatch nothing") {
  CHECK(decode_whole("\n\n\r\n\r\r").empty());
}

TEST_CASE("sse: finish dispatches a final event that lacked its blank line") {
  CHECK(decode({"data: tail"}, false).empty());
  CHECK(decode({"data: tail"}, true) == std::vector<std::string>{"|tail"});
  CHECK(decode({"data: a\ndata: b\n"}, true) == std::vector<std::string>{"|a\nb"});
  CHECK(decode({"event: e\ndata: b\r"}, true) == std::vector<std::string>{"e|b"});
  // Nothing pending: finish adds nothing.
  CHECK(decode({"data: x\n\n"}, true) == std::vector<std::string>{"|x"});
  CHECK(decode({"event: only\n"}, true).empty());
  CHECK(decode({": comment"}, true).empty());
}

TEST_CASE("sse: events are delivered as soon as their blank line arrives") {
  Decoder d;
  std::vector<std::string> out;
  auto sink = [&](llmx::sse::Event&& e) { out.push_back(show(e)); };
  CHECK(d.feed("data: first\n", sink));
  CHECK(out.empty());
  CHECK(d.feed("\n", sink));
  CHECK(out == std::vector<std::string>{"|first"});
  CHECK(d.feed("data: second\n\ndata: thi", sink));
  CHECK(out == std::vector<std::string>{"|first", "|second"});
  d.finish(sink);
  CHECK(out == std::vector<std::string>{"|first", "|second", "|thi"});
}

TEST_CASE("sse: an event over the size limit makes feed return false and the decoder stays failed") {
  SUBCASE("one long line in one feed") {
    Decoder d(32);
    int events = 0;
    auto sink = [&](llmx::sse::Event&&) { ++events; };
    CHECK_FALSE(d.feed("data: " + std::string(64, 'x') + "\n\n", sink));
    CHECK(d.failed());
    CHECK_FALSE(d.feed("data: ok\n\n", sink));
    d.finish(sink);
    CHECK(events == 0);
  }
  SUBCASE("a partial line that keeps growing across feeds") {
    Decoder d(32);
    int events = 0;
    auto sink = [&](llmx::sse::Event&&) { ++events; };
    bool ok = true;
    for (int i = 0; i < 100 && ok; ++i) ok = d.feed("xxxx", sink);
    CHECK_FALSE(ok);
    CHECK(d.failed());
    CHECK(events == 0);
  }
  SUBCASE("many short data lines of one event") {
    Decoder d(32);
    int events = 0;
    auto sink = [&](llmx::sse::Event&&) { ++events; };
    bool ok = true;
    for (int i = 0; i < 20 && ok; ++i) ok = d.feed("data: 0123456789\n", sink);
    CHECK_FALSE(ok);
    CHECK(d.failed());
    d.finish(sink);
    CHECK(events == 0);
  }
  SUBCASE("the limit is per event: many small events are fine") {
    Decoder d(32);
    int events = 0;
    auto sink = [&](llmx::sse::Event&&) { ++events; };
    for (int i = 0; i < 100; ++i) REQUIRE(d.feed("data: 0123456789\n\n", sink));
    CHECK_FALSE(d.failed());
    CHECK(events == 100);
  }
  SUBCASE("an event right at the limit is accepted") {
    Decoder d(32);
    std::vector<std::string> out;
    auto sink = [&](llmx::sse::Event&& e) { out.push_back(e.data); };
    CHECK(d.feed("data: " + std::string(26, 'y') + "\n\n", sink));  // 32 bytes of line
    CHECK(out == std::vector<std::string>{std::string(26, 'y')});
  }
}
