// The thread store (engine.md §9, DECISIONS P11): lists, finds, archives and restores stored
// threads (rollout files under `<home>/sessions/YYYY/MM/DD/`). Plain code, one owner at a time
// (the store actor); it keeps each day's index in memory and re-validates it with a few stats, so
// the cost of a page does not grow with the number of stored threads (see thread_day.hpp).
//
// Listing order is newest first: day directories in descending numeric order, inside a day
// (file-name timestamp desc, uuid desc). Cursors are `<YYYY-MM-DDThh-mm-ss>|<uuid>` of the last
// item returned; a page is full unless the end is reached.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/store/rollout.hpp"
#include "protocol/store/thread_day.hpp"

namespace llmx::threads {

class StoreError : public std::runtime_error {
 public:
  enum class Kind {
    invalid_cursor,   // → -32602
    invalid_id,       // not a UUID
    invalid_request,  // archive path checks (protocol.md archiveConversation)
    not_found,        // "no rollout found for conversation id <id>"
    io,               // the disk refused (move, mkdir, read)
  };
  StoreError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct ThreadSummary {
  std::string id;
  std::string path;        // absolute
  std::string preview;
  std::string created_at;  // UTC YYYY-MM-DDThh:mm:ss.mmmZ, from session_meta.timestamp
  std::string updated_at;  // the file's mtime, same format
  int64_t created_unix = 0;
  int64_t updated_unix = 0;
  std::string source;  // "cli", "exec", "mcp", "vscode", … or the JSON text of an object source
  std::optional<std::string> model_provider;
  std::string cwd;
  std::string cli_version;
  std::optional<rollout::GitInfo> git;
  bool archived = false;
  std::optional<std::string> name;  // the user's title, as the index knows it
  // One field list: CAF carries these between the store actor and sessions.
  LLMX_FIELDS(v("id", s.id); v("path", s.path); v("preview", s.preview); v("created_at", s.created_at);
              v("updated_at", s.updated_at); v("created_unix", s.created_unix);
              v("updated_unix", s.updated_unix); v("source", s.source); v("model_provider", s.model_provider);
              v("cwd", s.cwd); v("cli_version", s.cli_version); v("git", s.git); v("archived", s.archived);
              v("name", s.name))
};

struct ListQuery {
  size_t page_size = 25;  // < 1 → 1
  std::optional<std::string> cursor;  // empty string = none
  // Empty = all. A thread without provider matches iff the list contains default_provider.
  std::vector<std::string> model_providers;
  std::vector<std::string> sources;  // empty = all
  std::string default_provider = "litellm";
  std::optional<std::string> cwd;  // only threads started in this folder (ACP session/list)
  LLMX_FIELDS(v("page_size", s.page_size); v("cursor", s.cursor); v("model_providers", s.model_providers);
              v("sources", s.sources); v("default_provider", s.default_provider); v("cwd", s.cwd))
};

struct ListPage {
  std::vector<ThreadSummary> items;
  std::optional<std::string> next_cursor;  // set iff more matching threads follow
  size_t scanned_files = 0;                // listable threads looked at
  std::vector<std::string> warnings;       // unreadable folders, skipped
  LLMX_FIELDS(v("items", s.items); v("next_cursor", s.next_cursor); v("scanned_files", s.scanned_files);
              v("warnings", s.warnings))
};

class ThreadStore {
 public:
  explicit ThreadStore(std::string home);

  // Throws StoreError(invalid_cursor) for a cursor that is not `<ts>|<uuid>`.
  ListPage list(const ListQuery& query);
  // Archived threads (a flat scan of archived_sessions/, heads read as needed).
  ListPage list_archived(const ListQuery& query);

  // The rollout of a thread under sessions/ (nullopt: none). Throws StoreError(invalid_id).
  // A UUID v7 id names its creation time, so that day and its neighbours are looked at first.
  std::optional<std::string> find_path(const std::string& id);
  std::optional<std::string> find_archived_path(const std::string& id);

  // Moves the rollout to `<home>/archived_sessions/<same name>`; returns the new path. A given
  // path must canonicalize to a file inside `<home>/sessions` named `…<id>.jsonl`
  // (StoreError invalid_request with protocol.md's texts); without one the id is looked up.
  std::string archive(const std::string& id,
                      std::optional<std::string> rollout_path = std::nullopt);
  // Moves an archived rollout back to `sessions/YYYY/MM/DD/` (date from its name) and indexes it;
  // returns the restored path.
  std::string unarchive(const std::string& id);

  // The summary of one rollout file from its head. StoreError(io) when it cannot be read or has
  // no session_meta.
  ThreadSummary summary_of(const std::string& rollout_path);

  const StoreStats& stats() const { return stats_; }
  const std::string& home() const { return home_; }

 private:
  DayIndex& day(const std::string& date_dir);
  std::optional<std::string> find_in_day(const std::string& date_dir, const std::string& uuid);

  std::string home_;
  std::string sessions_;
  std::map<std::string, std::unique_ptr<DayIndex>> days_;  // by "YYYY/MM/DD"
  StoreStats stats_;
};

// For tests and benchmarks: writes a minimal valid rollout at rollout_path(home, t, id) —
// session_meta, then (unless `user_text` is empty) a user message response_item and its
// user_message event — with plain stdio and no index record. `source` is a plain name ("cli")
// or JSON text ("{\"subagent\":\"review\"}").
void write_synthetic_rollout(const std::string& home, std::chrono::system_clock::time_point t,
                             const std::string& id, const std::string& user_text,
                             const std::string& provider, const std::string& source);

}  // namespace llmx::threads
