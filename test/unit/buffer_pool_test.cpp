#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "protocol/base/buffer_pool.hpp"

using namespace llmx;

TEST_CASE("a pooled buffer comes back when the last copy of its shared text is gone") {
  BufferPool pool(4, 64 * 1024);
  auto s = pool.take(10000);
  CHECK(s.capacity() >= 16384);  // rounded up to a power of two: a somewhat longer body fits later
  s.assign(10000, 'x');
  const char* storage = s.data();
  {
    auto shared = pool.share(std::move(s));
    auto copy = shared;
    CHECK(copy.str() == std::string(10000, 'x'));
    CHECK(pool.kept() == 0);
    // Freed on another thread, as the HTTP thread lets go of a body the streamer made.
    std::thread([moved = std::move(copy)]() mutable { moved = SharedString(); }).join();
    CHECK(pool.kept() == 0);  // one copy still here
  }
  CHECK(pool.kept() == 1);
  auto again = pool.take(11000);
  CHECK(again.empty());
  CHECK(again.data() == storage);  // the same buffer
  CHECK(pool.kept() == 0);
}

TEST_CASE("a pool gives the smallest buffer that fits and keeps the biggest when full") {
  BufferPool pool(2, 64 * 1024);
  auto make = [&](size_t n) {
    std::string s;
    s.reserve(n);
    return s;
  };
  auto give = [&](size_t n) {
    auto s = make(n);
    pool.give_back(s);
    CHECK(s.empty());
  };
  give(8000);
  give(20000);
  give(100000);  // past the pool's cap: freed
  CHECK(pool.kept() == 2);
  CHECK(pool.take(5000).capacity() < 20000);   // the 8000 one, not the bigger
  give(8000);
  give(30000);  // full: replaces the smallest
  CHECK(pool.kept() == 2);
  CHECK(pool.take(25000).capacity() >= 30000);
  CHECK(pool.take(15000).capacity() >= 20000);
  CHECK(pool.take(1000).capacity() < 8000);    // none left: a fresh one (1 KB)
}

TEST_CASE("empty text shares nothing") {
  BufferPool pool(2, 1024);
  CHECK(pool.share(std::string()).empty());
  CHECK(pool.kept() == 0);
}

TEST_CASE("a pool of vectors serves batches of any thread") {
  Pool<std::vector<int>> pool(8, 1024);
  auto batch = pool.take(40);
  CHECK(batch.capacity() == 64);
  batch.assign(40, 7);
  const int* storage = batch.data();
  std::thread([&] { pool.give_back(batch); }).join();  // the receiver runs on another worker
  CHECK(batch.empty());
  auto next = pool.take(50);
  CHECK(next.empty());
  CHECK(next.data() == storage);
  std::vector<int> moved_from;
  pool.give_back(moved_from);  // no buffer: not kept
  CHECK(pool.kept() == 0);
}
