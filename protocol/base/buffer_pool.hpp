// Buffers one thread fills and another frees, kept for the next use instead of going back to the
// heap. A model request's body is built on a worker, owned by the transfer on the HTTP thread and
// freed by whichever lets go last, after a stream of seconds; a batch of events goes from the
// executor to the session, and its lines from the session to the writer, each on whichever
// worker runs that actor. Allocated per use, such 10-60 KB blocks land between the items
// conversations keep and churn the workers' heaps; kept, they stay where they are. A lock per
// use (a request, a batch of deltas) costs nothing next to that.
#pragma once

#include <bit>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/base/shared_string.hpp"

namespace llmx {

// `C` is std::string or a std::vector.
template <class C>
class Pool {
 public:
  // Keeps at most `max_kept` buffers with room for at most `max_capacity` elements each.
  Pool(std::size_t max_kept, std::size_t max_capacity) : max_kept_(max_kept), max_capacity_(max_capacity) {}

  // An empty buffer with room for `n` elements: the smallest kept one that fits, else a new one
  // with room for the next power of two, so it fits a somewhat bigger use later.
  C take(std::size_t n) {
    {
      std::lock_guard lock(mutex_);
      auto best = kept_.end();
      for (auto it = kept_.begin(); it != kept_.end(); ++it)
        if (it->capacity() >= n && (best == kept_.end() || it->capacity() < best->capacity())) best = it;
      if (best != kept_.end()) {
        C c = std::move(*best);
        *best = std::move(kept_.back());
        kept_.pop_back();
        return c;
      }
    }
    C c;
    c.reserve(std::bit_ceil(n));
    return c;
  }

  // Keeps `c` (cleared) unless it has no buffer of its own, is too big, or the pool is full of
  // buffers at least as big. Leaves `c` empty either way.
  void give_back(C& c) {
    C mine = std::move(c);
    c = C{};
    if (mine.capacity() <= C{}.capacity() || mine.capacity() > max_capacity_) return;
    mine.clear();
    std::lock_guard lock(mutex_);
    if (kept_.size() < max_kept_) return kept_.push_back(std::move(mine));
    // Full: a bigger buffer replaces the smallest, so buffers outgrown by longer histories or
    // bigger batches do not turn every later use away.
    auto smallest = kept_.begin();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->capacity() < smallest->capacity()) smallest = it;
    if (smallest->capacity() < mine.capacity()) std::swap(*smallest, mine);
  }

  // `text` shared, coming back to this pool when its last copy is gone (C = std::string).
  SharedString share(C text) {
    if (text.empty()) return {};
    std::shared_ptr<C> owned(new C(std::move(text)), [this](C* s) {
      give_back(*s);
      delete s;
    });
    return SharedString(std::move(owned));
  }

  std::size_t kept() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
  }

 private:
  const std::size_t max_kept_;
  const std::size_t max_capacity_;
  mutable std::mutex mutex_;
  std::vector<C> kept_;
};

using BufferPool = Pool<std::string>;

// The pool of model request bodies: enough for the requests in flight in a busy process. Past
// 64 KB glibc maps the block (the heap policy holds that threshold), which frees cleanly.
inline BufferPool& request_bodies() {
  static auto* pool = new BufferPool(64, 64 * 1024);  // never destroyed: bodies may outlive exit's statics
  return *pool;
}

}  // namespace llmx
