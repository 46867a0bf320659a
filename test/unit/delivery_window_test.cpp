// The window that holds a model stream back while its clients have too many of its events
// still to handle.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "actors/delivery_window.hpp"

using llmx::DeliveryWindow;
using llmx::Claim;

namespace {
struct Reopens {
  std::vector<uint64_t> tokens;
  std::shared_ptr<DeliveryWindow> window(uint64_t limit) {
    return DeliveryWindow::make(limit, [this](uint64_t token) { tokens.push_back(token); });
  }
};
}  // namespace

TEST_CASE("delivery window: open while the events out stay within the limit") {
  Reopens r;
  auto w = r.window(10);
  auto a = w->issue(6);
  CHECK_FALSE(w->close_if_full(1));
  auto b = w->issue(4);
  CHECK(w->out() == 10);
  CHECK_FALSE(w->close_if_full(1));  // at the limit is still within it
  CHECK_FALSE(w->closed());
  CHECK(r.tokens.empty());
}

TEST_CASE("delivery window: closes past the limit and reopens at half of it, once, with the last token") {
  Reopens r;
  auto w = r.window(10);
  auto a = std::make_unique<Claim>(w->issue(8));
  auto b = std::make_unique<Claim>(w->issue(4));
  CHECK(w->close_if_full(7));
  CHECK(w->close_if_full(9));  // a retry's transfer closes it again: its token is the one to wake
  CHECK(w->closed());
  b.reset();  // 8 out: still over half
  CHECK(r.tokens.empty());
  CHECK(w->closed());
  a.reset();  // 0 out
  CHECK(r.tokens == std::vector<uint64_t>{9});
  CHECK_FALSE(w->closed());
  auto c = w->issue(3);
  c = {};
  CHECK(r.tokens.size() == 1);  // not closed: nothing to reopen
}

TEST_CASE("delivery window: copies of a claim hand the events back when the last one goes") {
  Reopens r;
  auto w = r.window(4);
  auto t = std::make_unique<Claim>(w->issue(5));
  REQUIRE(w->close_if_full(1));
  auto copy1 = std::make_unique<Claim>(*t);
  auto copy2 = std::make_unique<Claim>(*t);
  t.reset();
  copy1.reset();
  CHECK(w->out() == 5);
  CHECK(r.tokens.empty());
  copy2.reset();
  CHECK(w->out() == 0);
  CHECK(r.tokens == std::vector<uint64_t>{1});
}

TEST_CASE("delivery window: an empty batch gets no claim, and a claim outlives its window's owner") {
  Reopens r;
  auto w = r.window(4);
  CHECK_FALSE(static_cast<bool>(w->issue(0)));
  auto t = w->issue(9);
  CHECK(static_cast<bool>(t));
  REQUIRE(w->close_if_full(3));
  w.reset();  // the stream is gone; the batch is still on its way
  t = {};
  CHECK(r.tokens == std::vector<uint64_t>{3});
}

TEST_CASE("delivery window: claims handed back from many threads reopen exactly once per closing") {
  std::atomic<int> reopened{0};
  auto w = DeliveryWindow::make(100, [&](uint64_t) { ++reopened; });
  for (int round = 0; round < 50; ++round) {
    std::vector<Claim> claims;
    for (int i = 0; i < 40; ++i) claims.push_back(w->issue(5));  // 200 out
    REQUIRE(w->close_if_full(round));
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k)
      threads.emplace_back([&, k] {
        for (int i = k; i < 40; i += 4) claims[i] = {};
      });
    for (auto& th : threads) th.join();
    CHECK(w->out() == 0);
  }
  CHECK(reopened == 50);
}
