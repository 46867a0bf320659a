#include "protocol/base/ids.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>

#include <fmt/format.h>

namespace llmx {

namespace {
std::mt19937_64& rng() {
  thread_local std::mt19937_64 gen{std::random_device{}() ^
                                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  return gen;
}

std::string format_uuid(uint64_t hi, uint64_t lo) {
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF,
                     lo >> 48, lo & 0xFFFFFFFFFFFFull);
}
}  // namespace

std::string new_uuid_v7() {
  uint64_t ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  uint64_t r1 = rng()(), r2 = rng()();
  uint64_t hi = (ms << 16) | 0x7000 | (r1 & 0x0FFF);
  uint64_t lo = (r2 & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  return format_uuid(hi, lo);
}

std::string new_uuid_v4() {
  uint64_t hi = (rng()() & 0xFFFFFFFFFFFF0FFFull) | 0x4000;
  uint64_t lo = (rng()() & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  return format_uuid(hi, lo);
}

bool is_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

std::string user_agent(const std::string& suffix) {
  struct utsname u {};
  uname(&u);
  std::string term = "unknown";
  if (const char* tp = std::getenv("TERM_PROGRAM"); tp && *tp) {
    term = tp;
    if (const char* tv = std::getenv("TERM_PROGRAM_VERSION"); tv && *tv) term += std::string("/") + tv;
  } else if (const char* t = std::getenv("TERM"); t && *t) {
    term = t;
  }
  for (auto& c : term)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '/') c = '_';
  std::string ua = fmt::format("llmx/{} ({} {}; {}) {}", LLMX_VERSION, u.sysname, u.release, u.machine, term);
  if (!suffix.empty()) ua += " (" + suffix + ")";
  for (auto& c : ua)
    if (c < 0x20 || c > 0x7e) c = '_';
  return ua;
}

std::optional<int64_t> uuid_v7_millis(std::string_view s) {
  if (!is_uuid(s) || s[14] != '7') return std::nullopt;
  std::string hex = std::string(s.substr(0, 8)) + std::string(s.substr(9, 4));
  return static_cast<int64_t>(std::strtoull(hex.c_str(), nullptr, 16));
}

}  // namespace llmx
