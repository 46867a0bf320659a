// llmx-sandbox-init (sandbox/init/) is linked into the engine as bytes and handed to the kernel
// from a sealed memfd, so the engine needs no helper binary on disk: the llmx CLI and a host
// program that embeds the engine sandbox alike.
#pragma once

#include <string>

namespace llmx::sandbox {

// A read-only descriptor of the sealed image, created on the first call (thread-safe); -1 with
// *error when the kernel refuses (no memfd_create, or vm.memfd_noexec forbids executing it).
int init_image_fd(std::string* error = nullptr);

}  // namespace llmx::sandbox
