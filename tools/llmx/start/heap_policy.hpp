// How the llmx process asks glibc's allocator to behave, set first thing in main(): a server
// that runs for hours must give memory back rather than let its arenas creep.
#pragma once

namespace llmx::cli {

// The mmap threshold llmx holds (glibc starts at 128 KB and then slides it up on its own).
inline constexpr int kMmapThreshold = 64 * 1024;

// glibc raises its mmap threshold to the size of each mapped chunk freed (up to 32 MB); after
// that every big short-lived buffer (a model request's body, a batch of output, a joined
// history) comes from the arenas, between the items a conversation keeps for hours, and the
// arenas creep (README, "Soak"). Held, buffers that big are mapped (when the arena's top has no
// room for them) and given back whole when freed. `tunables` is GLIBC_TUNABLES: a threshold the
// user set there wins. Returns whether this call now holds the threshold.
bool hold_mmap_threshold(const char* tunables);

}  // namespace llmx::cli
