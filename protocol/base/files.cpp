#include "protocol/base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace llmx::files {

std::optional<std::string> read(const std::string& path, int* error) {
  if (error) *error = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = errno;
    return std::nullopt;
  }
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error) *error = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string read_first_line(int fd, size_t limit) {
  std::string got;
  char buf[16 * 1024];
  while (got.find('\n') == std::string::npos && got.size() <= limit) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

Stamp stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Stamp{.error = errno};
  return Stamp{true,
               0,
               static_cast<uint64_t>(st.st_dev),
               static_cast<uint64_t>(st.st_ino),
               static_cast<uint64_t>(st.st_size),
               st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
               st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
}

Cache::Text Cache::read(const std::string& path, int* error) {
  auto now = stamp(path);
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(path);
    if (it != entries_.end() && it->second.stamp == now) {
      if (error) *error = it->second.error;
      return it->second.text;
    }
  }
  Text text;
  int err = now.error;
  if (now.exists)
    if (auto t = files::read(path, &err)) text = std::make_shared<const std::string>(std::move(*t));
  // Stamped before the read: a write during it changes the stamp, so the next call reads again.
  std::lock_guard lock(mu_);
  ++reads_;
  entries_[path] = Entry{now, text, err, nullptr};  // a new version: what was derived goes
  if (error) *error = err;
  return text;
}

Cache& settings_cache() {
  static auto* cache = new Cache;  // never destroyed: detached workers may outlive main
  return *cache;
}

}  // namespace llmx::files
