#include "protocol/base/crypto.hpp"

#include <sys/random.h>

#include <cerrno>
#include <stdexcept>

#include "protocol/base/runtime_library.hpp"

namespace llmx::crypto {

namespace {

// The few libcrypto entry points used, by their C signatures (OpenSSL 3).
struct Api {
  using Md = const void*;
  Md (*sha1)();
  Md (*sha256)();
  int (*digest)(const void* data, size_t count, unsigned char* md, unsigned int* size, Md type, void* engine);
  unsigned char* (*hmac)(Md md, const void* key, int key_len, const unsigned char* data, size_t data_len,
                         unsigned char* md_out, unsigned int* md_len);
};

Api load() {
  const RuntimeLibrary lib({"libcrypto.so.3", "libcrypto.so"}, "libcrypto", "libssl3");
  Api api{};
  lib.bind(api.sha1, "EVP_sha1");
  lib.bind(api.sha256, "EVP_sha256");
  lib.bind(api.digest, "EVP_Digest");
  lib.bind(api.hmac, "HMAC");
  return api;
}

const Api& api() {
  static const Api a = load();  // stays loaded for the life of the process
  return a;
}

constexpr unsigned kMaxDigest = 64;  // EVP_MAX_MD_SIZE

std::string digest(std::string_view bytes, Api::Md md) {
  unsigned char out[kMaxDigest];
  unsigned int len = 0;
  if (api().digest(bytes.data(), bytes.size(), out, &len, md, nullptr) != 1)
    throw std::runtime_error("libcrypto could not compute a digest");
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace

std::string sha1(std::string_view bytes) { return digest(bytes, api().sha1()); }

std::string sha256(std::string_view bytes) { return digest(bytes, api().sha256()); }

std::string sha1_hex(std::string_view bytes) { return hex(sha1(bytes)); }

std::string sha256_hex(std::string_view bytes) { return hex(sha256(bytes)); }

std::string hmac_sha256(std::string_view key, std::string_view bytes) {
  unsigned char out[kMaxDigest];
  unsigned int len = 0;
  const auto& a = api();
  if (!a.hmac(a.sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(bytes.data()),
              bytes.size(), out, &len))
    throw std::runtime_error("libcrypto could not compute an HMAC");
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

void random_bytes(void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("no secure random bytes from the kernel (getrandom)");
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace llmx::crypto
