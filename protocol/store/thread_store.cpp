#include "protocol/store/thread_store.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/text.hpp"

namespace llmx::threads {

namespace {

constexpr std::string_view kArchivedDir = "archived_sessions";

// The rollout in `dir` whose file name carries `uuid` (nullopt: none, or `dir` unreadable).
std::optional<std::string> find_by_uuid(const std::string& dir, const std::string& uuid) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::optional<std::string> found;
  while (dirent* de = ::readdir(d)) {
    auto name = parse_rollout_name(de->d_name);
    if (name && name->uuid == uuid) {
      found = dir + "/" + de->d_name;
      break;
    }
  }
  ::closedir(d);
  return found;
}

struct Cursor {
  std::string timestamp;
  std::string uuid;
};

std::optional<Cursor> parse_cursor(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  auto bar = text->find('|');
  if (bar != std::string::npos) {
    std::string ts = text->substr(0, bar), uuid = text->substr(bar + 1);
    if (is_name_timestamp(ts) && is_uuid(uuid)) return Cursor{ts, text::lower(uuid)};
  }
  throw StoreError(StoreError::Kind::invalid_cursor,
                   fmt::format("invalid cursor `{}`: expected `<YYYY-MM-DDThh-mm-ss>|<uuid>`", *text));
}

// True when a thread named (ts, uuid) comes after the cursor in listing order (newest first).
bool after_cursor(const RolloutName& name, const Cursor& c) {
  if (name.timestamp != c.timestamp) return name.timestamp < c.timestamp;
  return name.uuid < c.uuid;
}

std::string checked_id(const std::string& id) {
  if (!is_uuid(id))
    throw StoreError(StoreError::Kind::invalid_id, fmt::format("invalid thread id: `{}` is not a UUID", id));
  return text::lower(id);
}

// Children of `dir` whose names are `width` digits, largest first. A missing folder is empty;
// an unreadable one adds a warning naming it.
std::vector<std::string> numeric_children(const std::string& dir, size_t width,
                                          std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno != ENOENT) warnings.push_back(fmt::format("failed to read {}: {}", dir, std::strerror(errno)));
    return out;
  }
  while (dirent* de = ::readdir(d)) {
    std::string_view name = de->d_name;
    if (name.size() != width || de->d_type == DT_REG) continue;
    if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.emplace_back(name);
  }
  ::closedir(d);
  // Same width, so text order is numeric order.
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

// Calls fn("YYYY/MM/DD") for every day folder, newest first, skipping days after `max_day`;
// stops when fn returns false.
void for_each_day(const std::string& sessions, const std::optional<std::string>& max_day,
                  std::vector<std::string>& warnings,
                  const std::function<bool(const std::string&)>& fn) {
  for (const auto& y : numeric_children(sessions, 4, warnings)) {
    if (max_day && y > max_day->substr(0, 4)) continue;
    for (const auto& m : numeric_children(sessions + "/" + y, 2, warnings)) {
      std::string ym = y + "/" + m;
      if (max_day && ym > max_day->substr(0, 7)) continue;
      for (const auto& d : numeric_children(sessions + "/" + ym, 2, warnings)) {
        std::string ymd = ym + "/" + d;
        if (max_day && ymd > *max_day) continue;
        if (!fn(ymd)) return;
      }
    }
  }
}

bool matches(const IndexRecord& rec, const ListQuery& q) {
  auto contains = [](const std::vector<std::string>& list, const std::string& x) {
    return std::find(list.begin(), list.end(), x) != list.end();
  };
  if (!q.sources.empty() && !contains(q.sources, rec.source)) return false;
  if (q.cwd && rec.cwd != *q.cwd) return false;
  if (!q.model_providers.empty() &&
      !contains(q.model_providers, rec.model_provider.value_or(q.default_provider)))
    return false;
  return true;
}

// A file-name timestamp (local time) → unix seconds.
int64_t parse_name_time(const std::string& ts) {
  std::tm tm{};
  if (std::sscanf(ts.c_str(), "%4d-%2d-%2dT%2d-%2d-%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(std::mktime(&tm));
}

ThreadSummary make_summary(const std::string& path, const IndexRecord& rec,
                           const std::string& name_ts, const struct stat& st, bool archived) {
  using namespace std::chrono;
  ThreadSummary s;
  s.id = rec.id;
  s.path = path;
  s.preview = rec.preview;
  s.created_at = rec.created_at;
  s.created_unix = text::parse_utc(rec.created_at).value_or(parse_name_time(name_ts));
  auto mtime = system_clock::time_point(duration_cast<system_clock::duration>(
      seconds(st.st_mtim.tv_sec) + nanoseconds(st.st_mtim.tv_nsec)));
  s.updated_at = rollout::format_timestamp(mtime);
  s.updated_unix = st.st_mtim.tv_sec;
  s.source = rec.source;
  s.model_provider = rec.model_provider;
  s.cwd = rec.cwd;
  s.cli_version = rec.cli_version;
  s.git = rec.git;
  s.archived = archived;
  s.name = rec.name;
  return s;
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// rename(2) that refuses to replace an existing file.
void move_file(const std::string& from, const std::string& to) {
  if (exists(to))
    throw StoreError(StoreError::Kind::io, fmt::format("cannot move {} to {}: destination exists", from, to));
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw StoreError(StoreError::Kind::io,
                     fmt::format("cannot move {} to {}: {}", from, to, std::strerror(errno)));
}

void make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw StoreError(StoreError::Kind::io, fmt::format("cannot create {}: {}", dir, ec.message()));
}

std::string canonical(const std::string& path) {
  char* p = ::realpath(path.c_str(), nullptr);
  if (!p) return {};
  std::string out = p;
  std::free(p);
  return out;
}

}  // namespace

ThreadStore::ThreadStore(std::string home) : home_(std::move(home)), sessions_(home_ + "/sessions") {}

DayIndex& ThreadStore::day(const std::string& date_dir) {
  auto& slot = days_[date_dir];
  if (!slot) slot = std::make_unique<DayIndex>(sessions_ + "/" + date_dir);
  return *slot;
}

ListPage ThreadStore::list(const ListQuery& q) {
  ListPage page;
  auto cursor = parse_cursor(q.cursor);
  size_t page_size = std::max<size_t>(1, q.page_size);
  std::optional<std::string> max_day;
  if (cursor) max_day = RolloutName{cursor->timestamp, cursor->uuid}.date_dir();
  bool more = false;
  Cursor last;
  for_each_day(sessions_, max_day, page.warnings, [&](const std::string& ymd) {
    DayIndex& d = day(ymd);
    if (!d.refresh(page.warnings, stats_)) return true;
    for (const DayEntry* e : d.listable()) {
      if (cursor && !after_cursor(e->name, *cursor)) continue;
      ++page.scanned_files;
      if (!matches(e->rec, q)) continue;
      std::string path = d.dir() + "/" + e->rec.file;
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) continue;  // files win over the index
      if (page.items.size() == page_size) {
        more = true;
        return false;
      }
      page.items.push_back(make_summary(path, e->rec, e->name.timestamp, st, false));
      last = {e->name.timestamp, e->name.uuid};
    }
    return true;
  });
  if (more) page.next_cursor = last.timestamp + "|" + last.uuid;
  return page;
}

ListPage ThreadStore::list_archived(const ListQuery& q) {
  ListPage page;
  auto cursor = parse_cursor(q.cursor);
  size_t page_size = std::max<size_t>(1, q.page_size);
  std::string dir = home_ + "/" + std::string(kArchivedDir);
  std::vector<std::pair<RolloutName, std::string>> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* de = ::readdir(d))
      if (auto name = parse_rollout_name(de->d_name)) files.emplace_back(std::move(*name), de->d_name);
    ::closedir(d);
  } else if (errno != ENOENT) {
    page.warnings.push_back(fmt::format("failed to read {}: {}", dir, std::strerror(errno)));
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    if (a.first.timestamp != b.first.timestamp) return a.first.timestamp > b.first.timestamp;
    return a.first.uuid > b.first.uuid;
  });
  Cursor last;
  for (const auto& [name, file] : files) {
    if (cursor && !after_cursor(name, *cursor)) continue;
    std::string path = dir + "/" + file;
    auto head = read_rollout_head(path);
    ++stats_.heads_read;
    if (!head) continue;
    IndexRecord rec = record_from_head(*head, file);
    if (!rec.listable()) continue;
    ++page.scanned_files;
    if (!matches(rec, q)) continue;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    if (page.items.size() == page_size) {
      page.next_cursor = last.timestamp + "|" + last.uuid;
      break;
    }
    page.items.push_back(make_summary(path, rec, name.timestamp, st, true));
    last = {name.timestamp, name.uuid};
  }
  return page;
}

std::optional<std::string> ThreadStore::find_in_day(const std::string& date_dir,
                                                    const std::string& uuid) {
  std::vector<std::string> ignored;
  DayIndex& d = day(date_dir);
  if (!d.refresh(ignored, stats_)) return std::nullopt;
  const DayEntry* e = d.find_uuid(uuid);
  if (!e) return std::nullopt;
  std::string path = d.dir() + "/" + e->rec.file;
  if (!exists(path)) return std::nullopt;
  return path;
}

std::optional<std::string> ThreadStore::find_path(const std::string& id) {
  std::string uuid = checked_id(id);
  if (auto ms = uuid_v7_millis(uuid)) {
    // UUID v7: the id carries its creation time; the file went into the local day of its
    // creation (a day either side covers clock skew around midnight).
    std::time_t t = static_cast<std::time_t>(*ms / 1000);
    for (int offset : {0, -1, 1}) {
      std::time_t tt = t + offset * 86400;
      std::tm tm{};
      localtime_r(&tt, &tm);
      std::string ymd = fmt::format("{:04}/{:02}/{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
      if (auto p = find_in_day(ymd, uuid)) return p;
    }
  }
  // Other ids (and misplaced files): match file names day by day, without touching indexes.
  std::vector<std::string> ignored;
  std::optional<std::string> found;
  for_each_day(sessions_, std::nullopt, ignored, [&](const std::string& ymd) {
    found = find_by_uuid(sessions_ + "/" + ymd, uuid);
    return !found;
  });
  return found;
}

std::optional<std::string> ThreadStore::find_archived_path(const std::string& id) {
  std::string uuid = checked_id(id);
  return find_by_uuid(home_ + "/" + std::string(kArchivedDir), uuid);
}

std::string ThreadStore::archive(const std::string& id, std::optional<std::string> rollout_path) {
  std::string uuid = checked_id(id);
  std::string source;
  if (rollout_path) {
    using K = StoreError::Kind;
    std::string sessions = canonical(sessions_);
    if (sessions.empty())
      throw StoreError(K::io, fmt::format("unable to resolve sessions directory {}: {}", sessions_,
                                          std::strerror(errno)));
    std::string path = canonical(*rollout_path);
    if (path.empty() || !path.starts_with(sessions + "/"))
      throw StoreError(K::invalid_request,
                       fmt::format("rollout path `{}` must be in sessions directory", *rollout_path));
    std::string name = base_name(path);
    if (name.empty())
      throw StoreError(K::invalid_request, fmt::format("rollout path `{}` missing file name", *rollout_path));
    if (!name.ends_with(id + ".jsonl"))
      throw StoreError(K::invalid_request, fmt::format("rollout path `{}` does not match conversation id {}",
                                                       *rollout_path, id));
    source = path;
  } else {
    auto found = find_path(uuid);
    if (!found)
      throw StoreError(StoreError::Kind::not_found,
                       fmt::format("no rollout found for conversation id {}", id));
    source = *found;
  }
  std::string name = base_name(source);
  std::string archived_dir = home_ + "/" + std::string(kArchivedDir);
  make_dirs(archived_dir);
  std::string dest = archived_dir + "/" + name;
  move_file(source, dest);
  // After the move, so the index is newer than the directory change and the day stays clean.
  // A day without an index is left alone: its next listing rebuilds it.
  std::string day_dir = source.substr(0, source.size() - name.size() - 1);
  if (exists(day_dir + "/" + std::string(kIndexFileName)))
    append_index_records(day_dir, {removed_record(name)});
  return dest;
}

std::string ThreadStore::unarchive(const std::string& id) {
  auto found = find_archived_path(id);
  if (!found)
    throw StoreError(StoreError::Kind::not_found, fmt::format("no rollout found for conversation id {}", id));
  std::string name = base_name(*found);
  auto parsed = parse_rollout_name(name);  // find_archived_path only returns parsable names
  std::string day_dir = sessions_ + "/" + parsed->date_dir();
  make_dirs(day_dir);
  std::string dest = day_dir + "/" + name;
  move_file(*found, dest);
  ::utimensat(AT_FDCWD, dest.c_str(), nullptr, 0);  // updated now: it sorts first by update time
  if (auto head = read_rollout_head(dest)) append_index_records(day_dir, {record_from_head(*head, name)});
  return dest;
}

ThreadSummary ThreadStore::summary_of(const std::string& rollout_path) {
  std::string error;
  auto head = read_rollout_head(rollout_path, &error);
  if (!head) throw StoreError(StoreError::Kind::io, error);
  if (!head->meta)
    throw StoreError(StoreError::Kind::io, fmt::format("no session_meta line in {}", rollout_path));
  std::string name = base_name(rollout_path);
  IndexRecord rec = record_from_head(*head, name);
  auto parsed = parse_rollout_name(name);
  struct stat st {};
  if (::stat(rollout_path.c_str(), &st) != 0)
    throw StoreError(StoreError::Kind::io, fmt::format("failed to read {}: {}", rollout_path, std::strerror(errno)));
  bool archived = rollout_path.starts_with(home_ + "/" + std::string(kArchivedDir) + "/");
  return make_summary(rollout_path, rec, parsed ? parsed->timestamp : std::string(), st, archived);
}

void write_synthetic_rollout(const std::string& home, std::chrono::system_clock::time_point t,
                             const std::string& id, const std::string& user_text,
                             const std::string& provider, const std::string& source) {
  std::string path = rollout::rollout_path(home, t, id);
  rollout::SessionMeta meta;
  meta.id = id;
  meta.timestamp = rollout::format_timestamp(t);
  meta.cwd = "/tmp";
  meta.source = JsonOf<SessionSource>{source.starts_with("{") ? source : json::to_json(source)};
  if (!provider.empty()) meta.model_provider = provider;
  std::string data = rollout::encode_line(t, meta) + "\n";
  if (!user_text.empty()) {
    data += rollout::encode_line(t, user_message(user_text)) + "\n";
    data += rollout::encode_line(t, EventMsg(UserMessageEvent{.message = user_text, .images = {}})) + "\n";
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    make_dirs(path.substr(0, path.rfind('/')));
    f = std::fopen(path.c_str(), "wb");
  }
  if (!f) throw StoreError(StoreError::Kind::io, fmt::format("cannot write {}", path));
  std::fwrite(data.data(), 1, data.size(), f);
  std::fclose(f);
}

}  // namespace llmx::threads
