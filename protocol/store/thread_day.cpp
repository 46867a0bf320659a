#include "protocol/store/thread_day.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "protocol/base/files.hpp"

namespace llmx::threads {

using detail::Fd;

namespace {

bool same_time(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool newer(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

std::string read_warning(const std::string& dir, int err) {
  return fmt::format("failed to read {}: {}", dir, std::strerror(err));
}

}  // namespace

DayIndex::DayIndex(std::string dir)
    : dir_(std::move(dir)), index_path_(dir_ + "/" + std::string(kIndexFileName)) {}

void DayIndex::reset_content() {
  entries_.clear();
  sorted_dirty_ = true;
  offset_ = 0;
  has_header_ = false;
  garbage_ = 0;
  partial_tail_ = false;
  lines_ = 0;
}

void DayIndex::apply(const IndexRecord& rec) {
  if (rec.removed) {
    if (entries_.erase(rec.file)) sorted_dirty_ = true;
    return;
  }
  auto name = parse_rollout_name(rec.file);
  if (!name) return;
  auto [it, inserted] = entries_.try_emplace(rec.file);
  it->second.rec = rec;
  if (inserted) it->second.name = std::move(*name);
  sorted_dirty_ = true;
}

bool DayIndex::read_index(bool from_start) {
  if (from_start) reset_content();
  Fd fd(::open(index_path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) return false;
  std::string data;
  char chunk[65536];
  for (off_t at = offset_;;) {
    ssize_t n = ::pread(fd.fd, chunk, sizeof chunk, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(chunk, static_cast<size_t>(n));
    at += n;
  }
  size_t pos = 0;
  partial_tail_ = false;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) {
      partial_tail_ = true;  // a writer died mid-line, or is still writing: not consumed
      break;
    }
    std::string_view line(data.data() + pos, nl - pos);
    bool first_line = offset_ == 0 && pos == 0;
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (first_line && is_index_header(line)) {
      has_header_ = true;
      continue;
    }
    ++lines_;
    if (auto rec = decode_index_record(line))
      apply(*rec);
    else
      ++garbage_;
  }
  offset_ += static_cast<off_t>(pos);
  return true;
}

void DayIndex::remember_stats() {
  struct stat ds {}, is {};
  if (::stat(dir_.c_str(), &ds) == 0) dir_mtime_ = ds.st_mtim;
  index_exists_ = ::stat(index_path_.c_str(), &is) == 0;
  index_ino_ = index_exists_ ? is.st_ino : 0;
  index_size_ = index_exists_ ? is.st_size : 0;
  index_mtime_ = index_exists_ ? is.st_mtim : timespec{};
}

bool DayIndex::refresh(std::vector<std::string>& warnings, StoreStats& stats) {
  ++stats.days_checked;
  struct stat ds {}, is {};
  if (::stat(dir_.c_str(), &ds) != 0) {
    int err = errno;
    reset_content();
    loaded_ = false;
    if (err != ENOENT) warnings.push_back(read_warning(dir_, err));
    return false;
  }
  bool has_index = ::stat(index_path_.c_str(), &is) == 0;
  if (!has_index && errno != ENOENT) {
    warnings.push_back(read_warning(dir_, errno));
    return false;
  }
  bool unchanged = loaded_ && same_time(ds.st_mtim, dir_mtime_) && has_index == index_exists_ &&
                   (!has_index || (is.st_ino == index_ino_ && is.st_size == index_size_ &&
                                   same_time(is.st_mtim, index_mtime_)));
  if (unchanged) {
    ++stats.days_reused;
    recheck_unlisted(stats);
    return true;
  }
  if (!has_index) {
    reset_content();
  } else {
    bool tail = loaded_ && index_exists_ && is.st_ino == index_ino_ && is.st_size >= offset_;
    if (!read_index(!tail)) {
      warnings.push_back(read_warning(dir_, errno));
      loaded_ = false;
      return false;
    }
    ++(tail ? stats.index_tail_reads : stats.index_reads);
  }
  bool stale = !has_index || !has_header_ || garbage_ > 0 || partial_tail_ ||
               newer(ds.st_mtim, is.st_mtim);
  if (stale) {
    if (!repair(warnings, stats)) {
      loaded_ = false;  // the entries were reset by the failed repair
      return false;
    }
  } else {
    dir_mtime_ = ds.st_mtim;
    index_exists_ = true;
    index_ino_ = is.st_ino;
    index_size_ = is.st_size;
    index_mtime_ = is.st_mtim;
  }
  loaded_ = true;
  recheck_unlisted(stats);
  return true;
}

bool DayIndex::repair(std::vector<std::string>& warnings, StoreStats& stats) {
  ++stats.repairs;
  Fd dir_fd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.fd < 0) {
    warnings.push_back(read_warning(dir_, errno));
    return false;
  }
  // Exclusive: appenders (shared) wait, so nothing lands between reading and rewriting.
  while (::flock(dir_fd.fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  // Re-read under the lock: records may have been appended since the look that found us stale.
  bool has_index = read_index(true);
  if (!has_index && errno != ENOENT) {
    warnings.push_back(read_warning(dir_, errno));
    return false;
  }
  if (has_index) ++stats.index_reads;

  std::set<std::string> names;
  DIR* d = ::opendir(dir_.c_str());
  if (!d) {
    warnings.push_back(read_warning(dir_, errno));
    return false;
  }
  while (dirent* de = ::readdir(d))
    if (parse_rollout_name(de->d_name)) names.insert(de->d_name);
  ::closedir(d);

  std::vector<IndexRecord> changes;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (names.count(it->first)) {
      ++it;
      continue;
    }
    changes.push_back(removed_record(it->first));
    it = entries_.erase(it);
    sorted_dirty_ = true;
  }
  for (const auto& name : names) {
    if (entries_.count(name)) continue;
    std::string path = dir_ + "/" + name;
    auto head = read_rollout_head(path);
    ++stats.heads_read;
    // An unreadable file is still known (not listable), so it is not re-read until it changes.
    IndexRecord rec = record_from_head(head ? *head : RolloutHead{}, name);
    if (struct stat st {}; !head && ::stat(path.c_str(), &st) == 0) rec.size = st.st_size;
    apply(rec);
    changes.push_back(std::move(rec));
  }

  // Rewrite when there is nothing trustworthy to append to, or mostly superseded records.
  bool rewrite = !has_index || !has_header_ || garbage_ > 0 || partial_tail_ ||
                 lines_ > 2 * entries_.size() + 64;
  bool written = true;
  if (rewrite) {
    written = rewrite_index();
    if (written) ++stats.index_rewrites;
  } else if (!changes.empty()) {
    std::string bytes;
    for (const auto& r : changes) bytes += encode_index_record(r) + "\n";
    Fd fd(::open(index_path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    written = fd.fd >= 0 && files::write_all(fd.fd, bytes);
  }
  // The index now describes the directory: make it newer than the directory's last change (the
  // rename of a rewrite included) so the next look finds the day clean.
  if (written) ::utimensat(AT_FDCWD, index_path_.c_str(), nullptr, 0);
  remember_stats();
  if (written) {
    // We held the lock, so the file holds exactly what was read plus what we wrote.
    offset_ = index_size_;
    if (rewrite) {
      has_header_ = true;
      garbage_ = 0;
      partial_tail_ = false;
      lines_ = entries_.size();
    }
  }
  // A failed write (read-only home) leaves a correct in-memory view; the remembered stats keep
  // it in use until the disk changes.
  return true;
}

bool DayIndex::rewrite_index() {
  std::string tmp = fmt::format("{}.tmp.{}", index_path_, ::getpid());
  std::string bytes = std::string(kIndexHeader) + "\n";
  for (const auto& [_, e] : entries_) bytes += encode_index_record(e.rec) + "\n";
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (fd.fd < 0) return false;
    if (!files::write_all(fd.fd, bytes)) {
      ::unlink(tmp.c_str());
      return false;
    }
  }
  if (::rename(tmp.c_str(), index_path_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

void DayIndex::recheck_unlisted(StoreStats& stats) {
  for (auto& [file, e] : entries_) {
    if (e.rec.listable()) continue;
    std::string path = dir_ + "/" + file;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    if (e.rec.size && *e.rec.size == st.st_size) continue;
    auto head = read_rollout_head(path);
    ++stats.heads_read;
    if (!head) {
      e.rec.size = st.st_size;  // not again until it changes
      continue;
    }
    // Record what the file says now: a user message the writer did not record (it may have died),
    // or just the size, so the next process does not read this head again.
    IndexRecord rec = record_from_head(*head, file);
    append_index_records(dir_, {rec});
    e.rec = std::move(rec);
    sorted_dirty_ = true;
  }
}

const std::vector<const DayEntry*>& DayIndex::listable() {
  if (!sorted_dirty_) return sorted_;
  sorted_.clear();
  for (const auto& [_, e] : entries_)
    if (e.rec.listable()) sorted_.push_back(&e);
  std::sort(sorted_.begin(), sorted_.end(), [](const DayEntry* a, const DayEntry* b) {
    if (a->name.timestamp != b->name.timestamp) return a->name.timestamp > b->name.timestamp;
    return a->name.uuid > b->name.uuid;
  });
  sorted_dirty_ = false;
  return sorted_;
}

const DayEntry* DayIndex::find_uuid(std::string_view uuid) const {
  for (const auto& [_, e] : entries_)
    if (e.name.uuid == uuid) return &e;
  return nullptr;
}

}  // namespace llmx::threads
