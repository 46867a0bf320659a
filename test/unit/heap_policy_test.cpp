// The llmx binary holds glibc's mmap threshold (tools/llmx/start/heap_policy.hpp).
#include <doctest/doctest.h>

#include <cstdlib>

#include "tools/llmx/start/heap_policy.hpp"

namespace {

// Sanitizers bring their own allocator: its blocks carry no glibc chunk header. (The sanitized build is
// Clang's, which has __has_feature.)
#ifndef __has_feature
#define __has_feature(x) 0
#endif
constexpr bool kGlibcAllocator = !__has_feature(address_sanitizer);

// Whether a block of `size` bytes comes as its own mapping: glibc marks such a chunk in the size
// word before it (IS_MMAPPED, 0x2). Asked of the block itself, not of glibc's process-wide count,
// which another thread's allocation can move between two reads.
bool mapped(size_t size) {
  void* p = std::malloc(size);
  REQUIRE(p != nullptr);
  static_cast<char*>(p)[size - 1] = 1;
  asm volatile("" : : "r"(p) : "memory");  // the block escapes: the compiler may not drop it
  const bool own_mapping = (static_cast<const size_t*>(p)[-1] & 0x2) != 0;
  std::free(p);
  return own_mapping;
}

}  // namespace

TEST_CASE("heap policy: a threshold set in GLIBC_TUNABLES is the user's") {
  CHECK_FALSE(llmx::cli::hold_mmap_threshold("glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=4096"));
}

TEST_CASE("heap policy: big buffers stay mapped after a bigger one was freed") {
  if (!kGlibcAllocator) return;
  REQUIRE(llmx::cli::hold_mmap_threshold(nullptr));
  // Left to itself, glibc would now raise its threshold to 8 MB, and 1 MB would come from an arena.
  void* big = std::malloc(8 << 20);
  REQUIRE(big != nullptr);
  asm volatile("" : : "r"(big) : "memory");
  std::free(big);
  // (glibc maps only what its free chunks and the top of the heap cannot serve. Earlier tests in
  // the same process leave free chunks of a few hundred KB, so the blocks checked are larger.)
  CHECK(mapped(1 << 20));
  CHECK(mapped(4 << 20));
  CHECK_FALSE(mapped(16 * 1024));
}
