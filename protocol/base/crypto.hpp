// Digests, MACs and secrets. The digests come from libcrypto, loaded on first use (dlopen) and
// not linked: its relocations at process start cost a client waiting for `initialize` more than
// a tenth of the wait, and most processes never hash anything. Random bytes come from the kernel.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace llmx::crypto {

// The raw 20-byte SHA-1 and 32-byte SHA-256 of `bytes`, and HMAC-SHA-256 of `bytes` under `key`.
// Throw std::runtime_error when libcrypto cannot be loaded.
std::string sha1(std::string_view bytes);
std::string sha256(std::string_view bytes);
std::string hmac_sha256(std::string_view key, std::string_view bytes);

// Lower-case hex of raw bytes, and of the two digests (content ids and versions on the wire,
// git blob ids, long MCP tool names).
std::string hex(std::string_view bytes);
std::string sha1_hex(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);

// `n` bytes from the kernel's CSPRNG (getrandom); throws std::runtime_error when it fails.
void random_bytes(void* out, size_t n);

// Equality that takes the same time wherever the first difference is (for secrets).
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace llmx::crypto
