// Buffers one thread fills and another frees, kept for the next use instead of going back to the
// heap. A model request's body is built on a worker, owned by the transfer on the HTTP thread and
// freed by whichever lets go last, after a stream of seconds: a 10-60 KB block with that life,
// allocated per request, lands between the items conversations keep and churns the workers'
// heaps. Kept ones stay where they are.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/base/shared_string.hpp"

namespace llmx {

class BufferPool {
 public:
  // Keeps at most `max_kept` buffers of at most `max_capacity` bytes each (bigger ones the heap
  // maps and unmaps on its own).
  BufferPool(std::size_t max_kept, std::size_t max_capacity) : max_kept_(max_kept), max_capacity_(max_capacity) {}

  // An empty string with room for `size` bytes: the smallest kept one that fits, else a new one
  // rounded up to 4 KB, so it fits a somewhat bigger body later.
  std::string take(std::size_t size);
  // Keeps `s` (cleared) unless it is too big, or the pool is full of buffers at least as big.
  void give_back(std::string s);
  // `text` shared, going back to this pool when its last copy is gone.
  SharedString share(std::string text);

  std::size_t kept() const;

  // The pool of model request bodies.
  static BufferPool& request_bodies();

 private:
  const std::size_t max_kept_;
  const std::size_t max_capacity_;
  mutable std::mutex mutex_;
  std::vector<std::string> kept_;
};

}  // namespace llmx
