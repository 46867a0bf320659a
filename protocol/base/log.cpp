#include "protocol/base/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace llmx::log {

namespace {
Level from_env() {
  const char* v = std::getenv("LLMX_LOG");
  Level l = Level::warn;
  if (v) {
    std::string_view s(v);
    if (s == "debug" || s == "trace") l = Level::debug;
    else if (s == "info") l = Level::info;
    else if (s == "error") l = Level::error;
    else if (s == "off") l = Level::off;
  }
  return l;
}

std::atomic<Level>& current() {
  static std::atomic<Level> l{from_env()};
  return l;
}
}  // namespace

Level level() { return current().load(std::memory_order_relaxed); }
void set_level(Level l) { current().store(l, std::memory_order_relaxed); }

bool set_level(std::string_view name) {
  if (name == "debug") set_level(Level::debug);
  else if (name == "info" || name == "notice") set_level(Level::info);
  else if (name == "warning" || name == "warn") set_level(Level::warn);
  else if (name == "error" || name == "critical" || name == "alert" || name == "emergency") set_level(Level::error);
  else return false;
  return true;
}

void write(Level l, std::string_view message) {
  static constexpr std::string_view names[] = {"DEBUG", "INFO", "WARN", "ERROR", ""};
  std::string line = fmt::format("llmx {}: {}\n", names[static_cast<int>(l)], message);
  // One write per line so lines from different threads never interleave.
  [[maybe_unused]] auto n = ::write(2, line.data(), line.size());
}

}  // namespace llmx::log
