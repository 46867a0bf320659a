// Values a thread keeps between uses, at most `Max` of them: buffers that keep their capacity,
// so a path taken per request or per batch allocates once per thread instead of once per use.
// `Tag` names the store, so two users of the same type do not share one.
#pragma once

#include <bit>
#include <cstddef>
#include <utility>
#include <vector>

namespace llmx {

template <class Tag, class T, std::size_t Max = 1>
class ThreadKept {
 public:
  // A kept value, or a fresh one when the thread keeps none.
  static T take() {
    if (gone_ || store_.empty()) return T{};
    T v = std::move(store_.back());
    store_.pop_back();
    return v;
  }
  // Keeps `v` for the next take() on this thread; dropped when Max are kept already, or when the
  // thread's store is gone (a static destroyed at exit, after the thread's own values).
  static void keep(T v) {
    if (!gone_ && store_.size() < Max) store_.push_back(std::move(v));
  }

 private:
  struct Store : std::vector<T> {
    Store() { this->reserve(Max); }  // keep() only moves, it never allocates
    ~Store() { gone_ = true; }
  };
  static inline thread_local bool gone_ = false;  // trivially destructible: readable after ~Store
  static inline thread_local Store store_;
};

// Room for `n` elements, rounded up to a power of two: a kept buffer reserved to the exact size
// of each request would reallocate for almost every next one (histories grow an item or two).
template <class C>
void reserve_rounded(C& c, std::size_t n) {
  if (c.capacity() < n) c.reserve(std::bit_ceil(n));
}

// A vector lent by the thread's store for its owner's life and given back empty, capacity kept,
// unless a rare huge batch grew it past `MaxCapacity` elements. For per-batch or per-request
// vectors of big elements, which were a fresh 10-50 KB allocation, freed at once, for every use.
// Movable: the moved-from one has no buffer and gives nothing back.
template <class Tag, class T, std::size_t MaxCapacity>
struct KeptVector {
  using Kept = ThreadKept<Tag, std::vector<T>>;
  KeptVector() : items(Kept::take()) {}
  ~KeptVector() {
    items.clear();
    if (items.capacity() > 0 && items.capacity() <= MaxCapacity) Kept::keep(std::move(items));
  }
  KeptVector(KeptVector&&) noexcept = default;
  KeptVector& operator=(const KeptVector&) = delete;
  std::vector<T> items;
};

}  // namespace llmx
