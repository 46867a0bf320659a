// Whole files: the one reader, and a cache that re-reads a file only when it changed. Settings
// files (config.toml, auth.json, AGENTS.md) are read for every request that derives a config;
// the cache turns each of those reads into one stat() while the file stays the same.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace llmx::files {

// The whole file; nullopt when it cannot be opened or read (missing, a directory, no access).
// `error` (optional) gets errno then, 0 otherwise.
std::optional<std::string> read(const std::string& path, int* error = nullptr);

// write(2) until everything is written (EINTR and short writes retried); false on an error.
bool write_all(int fd, std::string_view data);

// Blocks until `fd` has given a whole line, EOF, or more than `limit` bytes without a newline,
// and returns all it read: the first line and whatever came behind it. For a server that answers
// its client's first message before its actors exist (tools/llmx/start/first_line.hpp).
std::string read_first_line(int fd, size_t limit);

// What identifies one version of a file: a change of content, a replacement or a rename over it
// changes at least one of these.
struct Stamp {
  bool exists = false;
  int error = 0;  // stat()'s errno when it does not exist (ENOENT, EACCES...)
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  friend bool operator==(const Stamp&, const Stamp&) = default;
};
Stamp stamp(const std::string& path);

// Files kept in memory while their stamp stays the same. Thread-safe; values are shared and
// never change, so a caller may keep one while the cache moves on.
class Cache {
 public:
  using Text = std::shared_ptr<const std::string>;  // nullptr: missing or unreadable
  // `error` (optional) gets the errno when the text is nullptr: ENOENT for a missing file.
  Text read(const std::string& path, int* error = nullptr);
  // Something derived from the text (a parsed document), rebuilt with `make` when the file
  // changed. `make` gets nullptr for a missing file; it may throw, nothing is cached then.
  template <class T, class Make>
  std::shared_ptr<const T> derived(const std::string& path, Make&& make);
  uint64_t reads() const { return reads_; }  // how often a file was really read (tests)

 private:
  struct Entry {
    Stamp stamp;
    Text text;
    int error = 0;
    std::shared_ptr<const void> derived;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::atomic<uint64_t> reads_{0};
};

// The process's cache of settings files.
Cache& settings_cache();

template <class T, class Make>
std::shared_ptr<const T> Cache::derived(const std::string& path, Make&& make) {
  auto text = read(path);
  {
    std::lock_guard lock(mu_);
    auto& e = entries_[path];
    if (e.derived && e.text == text) return std::static_pointer_cast<const T>(e.derived);
  }
  auto value = std::make_shared<const T>(make(text));
  std::lock_guard lock(mu_);
  auto& e = entries_[path];
  if (e.text == text) e.derived = value;
  return value;
}

}  // namespace llmx::files
