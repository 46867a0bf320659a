// The per-day thread index (engine.md §9.5, DECISIONS P11). Listing must not open every rollout
// file, so each day directory `sessions/YYYY/MM/DD/` carries a small append-only file
// `.index.jsonl` next to its rollouts: one JSON record per line about one rollout file (by file
// name), the last record for a name wins. The rollout writer appends a record when it creates a
// file and again when the first user message is persisted; the thread store repairs a day whose
// index is missing, incomplete or older than the directory (files always win over the index).
//
// Record shapes (one compact line each):
//   {"llmx_thread_index":1}                        first line of an index that covers the whole
//                                                  day (written only by a full repair)
//   {"file":"rollout-….jsonl","id":"…","created_at":"…","source":"cli","model_provider":"litellm",
//    "cwd":"/w","cli_version":"0.1.8","git":{…},"user":true,"preview":"…","size":1234}
//   {"file":"rollout-….jsonl","removed":true}
// An index without the first line (created by an append into a day nobody indexed yet) is
// treated as incomplete and repaired on the next listing.
//
// This header is plain code: no actors, no caches.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/store/rollout.hpp"

namespace llmx::threads {

inline constexpr std::string_view kIndexFileName = ".index.jsonl";
inline constexpr std::string_view kIndexHeader = "{\"llmx_thread_index\":1}";
inline constexpr size_t kPreviewMaxBytes = 4096;
// §9.5: the head is at most 10 session_meta / response_item records (events are not counted).
inline constexpr size_t kHeadRecords = 10;

// `rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl` split into its parts.
struct RolloutName {
  std::string timestamp;  // YYYY-MM-DDThh-mm-ss (local time at creation)
  std::string uuid;       // lowercased
  std::string date_dir() const;  // "YYYY/MM/DD", the day directory the file belongs in
};
std::optional<RolloutName> parse_rollout_name(std::string_view file_name);
// True for `YYYY-MM-DDThh-mm-ss` made of digits in the right places.
bool is_name_timestamp(std::string_view s);

// §9.5's preview rule: everything up to and including `## My request for LLMX:` is dropped when
// present, the rest is trimmed, then capped at kPreviewMaxBytes on a UTF-8 boundary.
std::string preview_of(std::string_view user_message_text);

// What the head of a rollout file says.
struct RolloutHead {
  std::optional<rollout::SessionMeta> meta;    // the first session_meta line
  bool has_user_message = false;               // a user_message event among the lines read
  std::optional<std::string> first_user_text;  // first user turn message (§1.11), else the event's
  int64_t size = 0;                            // of the file when it was read
  timespec mtime{};
};
// Reads lines until kHeadRecords counted records or the end; unparseable lines and a cut last
// line are skipped (rollout::decode_line). nullopt (and `error`) when the file cannot be read.
std::optional<RolloutHead> read_rollout_head(const std::string& path, std::string* error = nullptr);

struct IndexRecord {
  std::string file;  // rollout file name, no directory
  bool removed = false;
  std::string id;  // empty when the file has no session_meta
  std::string created_at;  // session_meta.timestamp
  std::string source;      // "cli", "exec", … or the JSON text of an object source
  std::optional<std::string> model_provider;
  std::string cwd;
  std::string cli_version;
  std::optional<rollout::GitInfo> git;
  bool has_user_message = false;
  std::string preview;
  std::optional<std::string> name;  // the title thread/name/set gave it (a repair forgets it)
  // Size of the file when the record was derived from it (absent in the writer's records). A
  // record that is not listable is re-checked against the file when its size differs.
  std::optional<int64_t> size;
  // Listed only with a session_meta and a user message (§9.5).
  bool listable() const { return !removed && !id.empty() && has_user_message; }
};

// The record the rollout writer appends when it creates `rollout_path` (not listable yet).
IndexRecord record_for(const rollout::SessionMeta& meta, const std::string& rollout_path);
// Marks the record listable with the preview of the first user message.
void set_first_user_message(IndexRecord& record, std::string_view user_message_text);
// The record a repair derives from a file's head.
IndexRecord record_from_head(const RolloutHead& head, const std::string& file_name);
IndexRecord removed_record(const std::string& file_name);

std::string encode_index_record(const IndexRecord& record);
// nullopt for garbage (and for the header line, see is_index_header).
std::optional<IndexRecord> decode_index_record(std::string_view line);
bool is_index_header(std::string_view line);

// `<home>/sessions/YYYY/MM/DD/.index.jsonl` for a rollout file name; empty if the name is not a
// rollout file name.
std::string index_path_for(const std::string& home, const std::string& rollout_file_name);

// Appends the record to its day's index as one write of whole lines, holding a shared lock on
// the day directory (a repair rewriting the index holds it exclusively). Best effort: a lost
// record is repaired by the next listing. Returns the error text on failure.
std::optional<std::string> append_index_record(const std::string& home, const IndexRecord& record);
std::optional<std::string> append_index_records(const std::string& day_dir,
                                                const std::vector<IndexRecord>& records);

namespace detail {
// Closes a file descriptor when the scope ends.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};
}  // namespace detail

}  // namespace llmx::threads
