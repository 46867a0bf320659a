// Moves rollout lines to disk. Plain code owned by the rollout store actor (one thread), so
// conversations never wait for the disk: they queue lines, the store writes them in batches.
//
// Every line reaches the file whole or not at all as far as this process can tell: one write
// per file per batch, and a failed or short write is cut back to the previous end of file so a
// later batch never lands after half a line. A process killed mid-write leaves at most one
// partial last line, which rollout::load() ignores and reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace llmx {

struct WriteFailure {
  std::string path;
  std::string message;
};

class RolloutWriter {
 public:
  explicit RolloutWriter(size_t max_open_files = 128);
  ~RolloutWriter();  // writes what is queued, closes every file
  RolloutWriter(const RolloutWriter&) = delete;
  RolloutWriter& operator=(const RolloutWriter&) = delete;

  // Queues complete lines (without their newline) for `path`; `sync` asks for an fsync after
  // they are written. Parent directories are created on the first write.
  void append(const std::string& path, const std::vector<std::string>& lines, bool sync = false);

  // Writes everything queued, one write per file. Returns the files that could not be written
  // (their queued lines are dropped; later appends are tried again).
  std::vector<WriteFailure> flush();

  // Flushes and closes one file (before it is moved by archive).
  std::vector<WriteFailure> close(const std::string& path);

  bool has_pending() const { return !pending_.empty(); }
  size_t open_files() const { return open_.size(); }

 private:
  struct Pending {
    std::string bytes;
    bool sync = false;
  };
  struct OpenFile {
    int fd = -1;
    std::list<std::string>::iterator lru;
  };
  int fd_for(const std::string& path, std::string& error);
  void close_fd(std::map<std::string, OpenFile>::iterator it);
  std::string write_one(const std::string& path, Pending& p);

  size_t max_open_;
  std::map<std::string, Pending> pending_;
  std::map<std::string, OpenFile> open_;
  std::list<std::string> lru_;  // most recently used first
};

}  // namespace llmx
