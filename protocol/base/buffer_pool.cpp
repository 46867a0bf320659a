#include "protocol/base/buffer_pool.hpp"

#include <memory>

namespace llmx {

std::string BufferPool::take(std::size_t size) {
  {
    std::lock_guard lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->capacity() >= size && (best == kept_.end() || it->capacity() < best->capacity())) best = it;
    if (best != kept_.end()) {
      std::string s = std::move(*best);
      *best = std::move(kept_.back());
      kept_.pop_back();
      return s;
    }
  }
  std::string s;
  s.reserve((size + 4095) / 4096 * 4096);
  return s;
}

void BufferPool::give_back(std::string s) {
  if (s.capacity() > max_capacity_) return;
  s.clear();
  std::lock_guard lock(mutex_);
  if (kept_.size() < max_kept_) return kept_.push_back(std::move(s));
  // Full: a bigger buffer replaces the smallest, so a pool of buffers outgrown by longer
  // histories does not turn every later request away.
  auto smallest = kept_.begin();
  for (auto it = kept_.begin(); it != kept_.end(); ++it)
    if (it->capacity() < smallest->capacity()) smallest = it;
  if (smallest != kept_.end() && smallest->capacity() < s.capacity()) std::swap(*smallest, s);
}

SharedString BufferPool::share(std::string text) {
  if (text.empty()) return {};
  std::shared_ptr<std::string> owned(new std::string(std::move(text)), [this](std::string* s) {
    give_back(std::move(*s));
    delete s;
  });
  return SharedString(std::move(owned));
}

std::size_t BufferPool::kept() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

BufferPool& BufferPool::request_bodies() {
  // Enough for the requests in flight at once in a busy process; past 64 KB glibc maps the block
  // (the heap policy holds that threshold), which frees cleanly.
  static auto* pool = new BufferPool(64, 64 * 1024);  // never destroyed: bodies may outlive exit's statics
  return *pool;
}

}  // namespace llmx
