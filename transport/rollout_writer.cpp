#include "transport/rollout_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace llmx {

RolloutWriter::RolloutWriter(size_t max_open_files) : max_open_(max_open_files ? max_open_files : 1) {}

RolloutWriter::~RolloutWriter() {
  flush();
  while (!open_.empty()) close_fd(open_.begin());
}

void RolloutWriter::append(const std::string& path, const std::vector<std::string>& lines, bool sync) {
  if (lines.empty() && !sync) return;
  auto& p = pending_[path];
  for (const auto& l : lines) {
    p.bytes += l;
    p.bytes += '\n';
  }
  p.sync = p.sync || sync;
}

int RolloutWriter::fd_for(const std::string& path, std::string& error) {
  if (auto it = open_.find(path); it != open_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.fd;
  }
  // Thousands of live conversations must not exhaust descriptors: keep the recent ones open.
  while (open_.size() >= max_open_) close_fd(open_.find(lru_.back()));
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) {
      error = fmt::format("cannot create {}: {}", std::filesystem::path(path).parent_path().string(), ec.message());
      return -1;
    }
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  }
  if (fd < 0) {
    error = fmt::format("cannot open {}: {}", path, std::strerror(errno));
    return -1;
  }
  lru_.push_front(path);
  open_.emplace(path, OpenFile{fd, lru_.begin()});
  return fd;
}

void RolloutWriter::close_fd(std::map<std::string, OpenFile>::iterator it) {
  ::close(it->second.fd);
  lru_.erase(it->second.lru);
  open_.erase(it);
}

std::string RolloutWriter::write_one(const std::string& path, Pending& p) {
  std::string error;
  int fd = fd_for(path, error);
  if (fd < 0) return error;
  struct stat st {};
  off_t before = ::fstat(fd, &st) == 0 ? st.st_size : -1;
  std::string_view rest(p.bytes);
  while (!rest.empty()) {
    ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = fmt::format("cannot write {}: {}", path, n < 0 ? std::strerror(errno) : "no progress");
      // Cut a partial batch back so the next one does not start in the middle of a line.
      if (before >= 0 && ::ftruncate(fd, before) != 0) {
      }
      close_fd(open_.find(path));
      return error;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (p.sync && ::fdatasync(fd) != 0) return fmt::format("cannot sync {}: {}", path, std::strerror(errno));
  return {};
}

std::vector<WriteFailure> RolloutWriter::flush() {
  std::vector<WriteFailure> failures;
  auto batch = std::move(pending_);
  pending_.clear();
  for (auto& [path, p] : batch)
    if (auto err = write_one(path, p); !err.empty()) failures.push_back({path, std::move(err)});
  return failures;
}

std::vector<WriteFailure> RolloutWriter::close(const std::string& path) {
  std::vector<WriteFailure> failures;
  if (auto it = pending_.find(path); it != pending_.end()) {
    auto p = std::move(it->second);
    pending_.erase(it);
    if (auto err = write_one(path, p); !err.empty()) failures.push_back({path, std::move(err)});
  }
  if (auto it = open_.find(path); it != open_.end()) close_fd(it);
  return failures;
}

}  // namespace llmx
