// One day directory of the thread store (`sessions/YYYY/MM/DD/`) as its index describes it,
// kept in memory and brought back in line with the disk on every look:
//  * unchanged directory and index (mtime, size, inode) → nothing is read (a warm listing costs
//    two stats per day, plus one per file that is not listable yet);
//  * the index grew → only the new records are read;
//  * the index is missing, lacks its header line, holds garbage or a cut line, or the directory
//    changed after the index did (a file created, removed or renamed without a record) → the day
//    is repaired under an exclusive lock on the directory: the index is re-read, the directory
//    listed, the head of every unknown rollout read, records of vanished files dropped; the
//    missing records are appended (or the index rewritten via temp + rename when it was missing
//    or damaged) and the index's mtime is bumped so the day reads as clean.
// A file that is not listable yet (no user message when its record was written) is re-read when
// its size differs from the record's (always, for the writer's records, which carry no size), and
// what was found is recorded; so a writer that died before its second record does not hide the
// thread forever, and an abandoned session costs one stat per look.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <ctime>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/store/thread_index.hpp"

namespace llmx::threads {

// Counters for tests and benchmarks (how much disk work a call did).
struct StoreStats {
  size_t days_checked = 0;     // day refreshes
  size_t days_reused = 0;      // refreshes answered from memory after a few stats
  size_t index_reads = 0;      // index files read from their start
  size_t index_tail_reads = 0; // reads of records appended since the last look
  size_t repairs = 0;          // days reconciled with their directory
  size_t index_rewrites = 0;   // indexes rewritten whole
  size_t heads_read = 0;       // rollout heads read
};

struct DayEntry {
  IndexRecord rec;
  RolloutName name;
};

class DayIndex {
 public:
  explicit DayIndex(std::string dir);

  // Brings the entries in line with the disk (see the file comment). False when the day cannot
  // be read (a warning naming the folder is added) or no longer exists.
  bool refresh(std::vector<std::string>& warnings, StoreStats& stats);

  // Listable entries, newest first: (name timestamp desc, uuid desc).
  const std::vector<const DayEntry*>& listable();
  // The live entry whose file name carries this (lowercase) uuid, or null.
  const DayEntry* find_uuid(std::string_view uuid) const;

  const std::string& dir() const { return dir_; }

 private:
  void reset_content();
  void apply(const IndexRecord& rec);
  // Reads the index from `offset_` (or from the start) and applies its records.
  bool read_index(bool from_start);
  bool repair(std::vector<std::string>& warnings, StoreStats& stats);
  bool rewrite_index();
  void recheck_unlisted(StoreStats& stats);
  void remember_stats();

  std::string dir_;
  std::string index_path_;
  std::map<std::string, DayEntry> entries_;  // by file name
  std::vector<const DayEntry*> sorted_;
  bool sorted_dirty_ = true;
  bool loaded_ = false;

  // What the disk looked like when the entries were last in line with it.
  timespec dir_mtime_{};
  bool index_exists_ = false;
  ino_t index_ino_ = 0;
  off_t index_size_ = 0;
  timespec index_mtime_{};

  // Index reading state.
  off_t offset_ = 0;          // bytes applied (always at a line boundary)
  bool has_header_ = false;
  size_t garbage_ = 0;        // lines that did not decode
  bool partial_tail_ = false; // the index ends inside a line
  size_t lines_ = 0;          // records read (superseded ones included)
};

}  // namespace llmx::threads
