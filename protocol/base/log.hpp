// Diagnostics on stderr (stdout belongs to the protocol). The level comes from LLMX_LOG
// (error, warn, info, debug; default warn) and can be changed at run time, e.g. by MCP's
// `logging/setLevel`.
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace llmx::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

Level level();
void set_level(Level l);
// Accepts MCP's syslog names too (notice, critical, alert, emergency). False when unknown.
bool set_level(std::string_view name);

void write(Level l, std::string_view message);

template <class... Ts>
void error(fmt::format_string<Ts...> f, Ts&&... xs) {
  if (level() <= Level::error) write(Level::error, fmt::format(f, std::forward<Ts>(xs)...));
}
template <class... Ts>
void warn(fmt::format_string<Ts...> f, Ts&&... xs) {
  if (level() <= Level::warn) write(Level::warn, fmt::format(f, std::forward<Ts>(xs)...));
}
template <class... Ts>
void info(fmt::format_string<Ts...> f, Ts&&... xs) {
  if (level() <= Level::info) write(Level::info, fmt::format(f, std::forward<Ts>(xs)...));
}
template <class... Ts>
void debug(fmt::format_string<Ts...> f, Ts&&... xs) {
  if (level() <= Level::debug) write(Level::debug, fmt::format(f, std::forward<Ts>(xs)...));
}

}  // namespace llmx::log
