// Unit tests for History (protocol/core/history.hpp): copies share the items and never see each
// other's appends; a history alone writes in place; past the limit the smallest segments are joined.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "protocol/base/json_codec.hpp"
#include "protocol/core/history.hpp"

using namespace llmx;

namespace {

std::vector<std::string> texts(const History& h) {
  std::vector<std::string> out;
  for (const auto& item : h) out.push_back(item.get_if<MessageItem>()->text());
  return out;
}

using Texts = std::vector<std::string>;

}  // namespace

TEST_CASE("history: copies share items and never see each other's appends") {
  History a{user_message("1"), user_message("2")};
  History b = a;
  CHECK(&a[0] == &b[0]);  // the same item, not a copy
  b.push_back(user_message("b3"));
  a.push_back(user_message("a3"));
  a.append({user_message("a4"), user_message("a5")});
  CHECK(texts(a) == Texts{"1", "2", "a3", "a4", "a5"});
  CHECK(texts(b) == Texts{"1", "2", "b3"});
  CHECK(a.size() == 5);
  CHECK(b.size() == 3);
  CHECK(a.back().get_if<MessageItem>()->text() == "a5");
  CHECK(a[3].get_if<MessageItem>()->text() == "a4");
  CHECK(a.front().get_if<MessageItem>()->text() == "1");
}

TEST_CASE("history: alone it appends in place, shared it opens a segment") {
  History h;
  CHECK(h.empty());
  CHECK(h.begin() == h.end());
  for (int i = 0; i < 5; ++i) h.push_back(user_message(std::to_string(i)));
  CHECK(h.segments() == 1);
  const ResponseItem* first = &h[0];
  {
    History request = h;  // a model request holds it while the task records more
    h.push_back(user_message("5"));
    CHECK(h.segments() == 2);
    CHECK(&h[0] == first);
    CHECK(request.size() == 5);
  }
  h.push_back(user_message("6"));  // the request let go: its own last segment again
  CHECK(h.segments() == 2);
  CHECK(texts(h) == Texts{"0", "1", "2", "3", "4", "5", "6"});
}

TEST_CASE("history: past the limit the smallest neighbours are joined, the old items stay put") {
  std::vector<ResponseItem> old;
  Texts want;
  for (int i = 0; i < 100; ++i) {
    old.push_back(user_message("old " + std::to_string(i)));
    want.push_back("old " + std::to_string(i));
  }
  History h(std::move(old));
  const ResponseItem* first = &h[0];
  std::vector<History> holders;
  for (size_t i = 1; i <= 8 * History::kMaxSegments; ++i) {
    holders.push_back(h);  // every append finds its last segment shared
    h.push_back(user_message(std::to_string(i)));
    want.push_back(std::to_string(i));
    CHECK(h.segments() <= History::kMaxSegments);
  }
  CHECK(texts(h) == want);
  CHECK(&h[0] == first);  // the big first segment was never copied
  CHECK(texts(holders.back()).size() == want.size() - 1);  // what a holder held is untouched
  CHECK(texts(holders.front()).size() == 100);
}

TEST_CASE("history: truncate keeps the first items and leaves other holders alone") {
  History h{user_message("0"), user_message("1")};
  History other = h;
  h.append({user_message("2"), user_message("3")});
  History third = h;
  h.push_back(user_message("4"));
  CHECK(h.segments() == 3);
  SUBCASE("inside a shared segment") {
    h.truncate(3);
    CHECK(texts(h) == Texts{"0", "1", "2"});
    CHECK(texts(third) == Texts{"0", "1", "2", "3"});
  }
  SUBCASE("at a segment's end") {
    h.truncate(2);
    CHECK(h.segments() == 1);
    CHECK(texts(h) == Texts{"0", "1"});
  }
  SUBCASE("to nothing, then growing again") {
    h.truncate(0);
    CHECK(h.empty());
    h.push_back(user_message("x"));
    CHECK(texts(h) == Texts{"x"});
  }
  SUBCASE("past its end: nothing changes") {
    h.truncate(9);
    CHECK(h.size() == 5);
  }
  CHECK(texts(other) == Texts{"0", "1"});
}

TEST_CASE("history: JSON is an array of items") {
  History h{user_message("hi"), FunctionCallItem{"shell", "{}", "c1"}};
  auto text = json::to_json(h);
  CHECK(text == json::to_json(h.to_vector()));
  auto back = json::parse_as<History>(text);
  CHECK(json::to_json(back) == text);
  CHECK(back.size() == 2);
}

TEST_CASE("history: copies appended to on other threads stay apart") {
  History base;
  for (int i = 0; i < 100; ++i) base.push_back(user_message(std::to_string(i)));
  std::vector<std::thread> threads;
  std::vector<size_t> sizes(4);
  for (size_t t = 0; t < sizes.size(); ++t)
    threads.emplace_back([copy = base, &sizes, t]() mutable {
      for (int i = 0; i < 1000; ++i) {
        History request = copy;  // what a model request would hold, dropped at once
        copy.push_back(user_message("t"));
      }
      sizes[t] = copy.size();
    });
  for (int i = 0; i < 1000; ++i) base.push_back(user_message("b"));
  for (auto& t : threads) t.join();
  for (auto s : sizes) CHECK(s == 1100);
  CHECK(base.size() == 1100);
  CHECK(texts(base)[99] == "99");
  CHECK(texts(base)[100] == "b");
}
