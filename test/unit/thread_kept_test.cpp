#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <thread>

#include "protocol/base/thread_kept.hpp"

using namespace llmx;

namespace {
struct BufferTag {};
struct OtherTag {};
using Buffers = ThreadKept<BufferTag, std::string, 2>;
}  // namespace

TEST_CASE("a kept value comes back with its capacity, on its own thread and store only") {
  std::string big;
  big.reserve(10000);
  const char* storage = big.data();
  Buffers::keep(std::move(big));

  std::thread([] { CHECK(Buffers::take().capacity() < 10000); }).join();    // another thread's store
  CHECK(ThreadKept<OtherTag, std::string, 2>::take().capacity() < 10000);  // another tag's store
  auto again = Buffers::take();
  CHECK(again.capacity() >= 10000);
  CHECK(again.data() == storage);  // the same buffer, not a copy
  CHECK(Buffers::take().capacity() < 10000);  // taken once, then the store is empty
}

TEST_CASE("a thread keeps at most Max values") {
  for (int i = 0; i < 3; ++i) {
    std::string s;
    s.reserve(5000 + i);
    Buffers::keep(std::move(s));
  }
  CHECK(Buffers::take().capacity() >= 5000);
  CHECK(Buffers::take().capacity() >= 5000);
  CHECK(Buffers::take().capacity() < 5000);  // the third was dropped
}

TEST_CASE("a kept vector comes back empty with its capacity, unless it grew past the cap") {
  struct Tag {};
  using Scratch = KeptVector<Tag, std::string, 100>;
  const std::string* storage = nullptr;
  {
    Scratch s;
    s.items.resize(50, "x");
    storage = s.items.data();
  }
  {
    Scratch s;
    CHECK(s.items.empty());
    CHECK(s.items.capacity() >= 50);
    CHECK(s.items.data() == storage);  // the same buffer
    s.items.resize(101);               // grown past the cap: not kept
  }
  Scratch s;
  CHECK(s.items.capacity() == 0);
}

TEST_CASE("reserve_rounded leaves room for the next slightly bigger request") {
  std::vector<int> v;
  reserve_rounded(v, 40);
  CHECK(v.capacity() == 64);
  reserve_rounded(v, 41);  // fits: no reallocation
  CHECK(v.capacity() == 64);
  reserve_rounded(v, 65);
  CHECK(v.capacity() == 128);
}

TEST_CASE("a moved kept vector gives its buffer back once, from where it ended up") {
  struct Tag {};
  using Scratch = KeptVector<Tag, int, 1000>;
  const int* storage = nullptr;
  std::optional<Scratch> moved;
  {
    Scratch first;
    first.items.reserve(10);
    storage = first.items.data();
    moved.emplace(std::move(first));
  }  // `first` ends without a buffer: it must not take the store's one place with an empty one
  moved.reset();
  Scratch again;
  CHECK(again.items.capacity() >= 10);
  CHECK(again.items.data() == storage);
}
