#include "protocol/store/thread_index.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "protocol/base/files.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"

namespace llmx::threads {

using detail::Fd;

namespace {

constexpr std::string_view kRequestMarker = "## My request for LLMX:";
// A head whose counted records are far apart (huge lines, or a file that is not a rollout) is
// not read past this many bytes.
constexpr size_t kHeadMaxBytes = 16u << 20;

bool is_digits(std::string_view s) {
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return !s.empty();
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Longest prefix of `s` of at most `max` bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string errno_text(int err) { return std::strerror(err); }

// Feeds one complete line of a rollout head into `head`; returns whether it counts toward
// kHeadRecords (session_meta and response_item do, §9.5).
bool take_head_line(std::string_view line, RolloutHead& head,
                    std::optional<std::string>& event_text) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return false;
  auto decoded = rollout::decode_line(line);
  if (!decoded) return false;
  if (auto* meta = std::get_if<rollout::SessionMeta>(&decoded->item)) {
    if (!head.meta) {
      head.meta = std::move(*meta);
      if (head.meta->timestamp.empty()) head.meta->timestamp = decoded->timestamp;
    }
    return true;
  }
  if (auto* item = std::get_if<ResponseItem>(&decoded->item)) {
    if (!head.first_user_text && rollout::is_user_turn_message(*item))
      head.first_user_text = item->get_if<MessageItem>()->text();
    return true;
  }
  if (auto* ev = std::get_if<EventMsg>(&decoded->item)) {
    if (auto* um = ev->get_if<UserMessageEvent>()) {
      head.has_user_message = true;
      if (!event_text) event_text = um->message;
    }
  }
  return false;
}

}  // namespace

detail::Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

std::string RolloutName::date_dir() const {
  return fmt::format("{}/{}/{}", timestamp.substr(0, 4), timestamp.substr(5, 2),
                     timestamp.substr(8, 2));
}

bool is_name_timestamp(std::string_view s) {
  // YYYY-MM-DDThh-mm-ss
  if (s.size() != 19) return false;
  return is_digits(s.substr(0, 4)) && s[4] == '-' && is_digits(s.substr(5, 2)) && s[7] == '-' &&
         is_digits(s.substr(8, 2)) && s[10] == 'T' && is_digits(s.substr(11, 2)) && s[13] == '-' &&
         is_digits(s.substr(14, 2)) && s[16] == '-' && is_digits(s.substr(17, 2));
}

std::optional<RolloutName> parse_rollout_name(std::string_view name) {
  constexpr std::string_view prefix = "rollout-", suffix = ".jsonl";
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  std::string_view core = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  // A UUID has a fixed width, so "the first suffix after a '-' that parses as a UUID" is the
  // last 36 characters.
  if (core.size() < 36 + 1 + 19) return std::nullopt;
  std::string_view uuid = core.substr(core.size() - 36);
  std::string_view ts = core.substr(0, core.size() - 37);
  if (core[core.size() - 37] != '-' || !is_uuid(uuid) || !is_name_timestamp(ts)) return std::nullopt;
  RolloutName out{std::string(ts), std::string(uuid)};
  for (auto& c : out.uuid) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string preview_of(std::string_view text) {
  if (auto pos = text.find(kRequestMarker); pos != std::string_view::npos)
    text.remove_prefix(pos + kRequestMarker.size());
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(utf8_prefix(text, kPreviewMaxBytes));
}

std::optional<RolloutHead> read_rollout_head(const std::string& path, std::string* error) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
    if (error) *error = fmt::format("failed to read {}: {}", path, errno_text(errno));
    return std::nullopt;
  }
  RolloutHead head;
  head.size = st.st_size;
  head.mtime = st.st_mtim;
  std::optional<std::string> event_text;
  std::string buf;
  size_t scanned = 0;  // bytes of `buf` already split into lines
  size_t counted = 0;
  bool eof = false;
  char chunk[16384];
  while (counted < kHeadRecords && !eof && buf.size() < kHeadMaxBytes) {
    ssize_t n = ::read(fd.fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
    } else {
      buf.append(chunk, static_cast<size_t>(n));
    }
    size_t start = 0;
    for (size_t nl; counted < kHeadRecords && (nl = buf.find('\n', scanned)) != std::string::npos;) {
      if (take_head_line(std::string_view(buf).substr(start, nl - start), head, event_text)) ++counted;
      start = scanned = nl + 1;
    }
    buf.erase(0, start);
    scanned = buf.size();
  }
  // A last line without '\n' still counts if it is complete (a cut line does not decode).
  if (eof && counted < kHeadRecords && !buf.empty()) take_head_line(buf, head, event_text);
  if (!head.first_user_text && event_text) head.first_user_text = std::move(event_text);
  return head;
}

IndexRecord record_for(const rollout::SessionMeta& meta, const std::string& rollout_path) {
  IndexRecord r;
  auto slash = rollout_path.rfind('/');
  r.file = slash == std::string::npos ? rollout_path : rollout_path.substr(slash + 1);
  r.id = meta.id;
  r.created_at = meta.timestamp;
  r.source = meta.source_name();
  r.model_provider = meta.model_provider;
  r.cwd = meta.cwd;
  r.cli_version = meta.cli_version;
  r.git = meta.git;
  return r;
}

void set_first_user_message(IndexRecord& record, std::string_view user_message_text) {
  record.has_user_message = true;
  record.preview = preview_of(user_message_text);
}

IndexRecord record_from_head(const RolloutHead& head, const std::string& file_name) {
  IndexRecord r;
  if (head.meta) r = record_for(*head.meta, file_name);
  r.file = file_name;
  r.has_user_message = head.has_user_message;
  if (head.first_user_text) r.preview = preview_of(*head.first_user_text);
  r.size = head.size;
  return r;
}

IndexRecord removed_record(const std::string& file_name) {
  IndexRecord r;
  r.file = file_name;
  r.removed = true;
  return r;
}

std::string encode_index_record(const IndexRecord& r) {
  json::Writer w;
  w.begin_object();
  w.field("file", r.file);
  if (r.removed) {
    w.field("removed", true);
  } else {
    w.field("id", r.id);
    w.field("created_at", r.created_at);
    w.field("source", r.source);
    if (r.model_provider) w.field("model_provider", *r.model_provider);
    w.field("cwd", r.cwd);
    w.field("cli_version", r.cli_version);
    if (r.git) {
      w.key("git");
      json::write_value(w, *r.git);
    }
    w.field("user", r.has_user_message);
    w.field("preview", r.preview);
    if (r.name) w.field("name", *r.name);
    if (r.size) w.field("size", *r.size);
  }
  w.end_object();
  return w.take();
}

bool is_index_header(std::string_view line) { return line == kIndexHeader; }

std::optional<IndexRecord> decode_index_record(std::string_view line) {
  json::Parser parser;  // its buffers come from the thread's pool (json_reader.cpp)
  try {
    json::Element root = parser.parse(line);
    if (!root.is_object()) return std::nullopt;
    json::Object o = root.get_object().value_unsafe();
    auto file = json::get_string(o, "file");
    if (!file || !parse_rollout_name(*file)) return std::nullopt;
    IndexRecord r;
    r.file = std::string(*file);
    if (json::get_bool(o, "removed").value_or(false)) {
      r.removed = true;
      return r;
    }
    auto str = [&o](std::string_view key) { return std::string(json::get_string(o, key).value_or("")); };
    r.id = str("id");
    r.created_at = str("created_at");
    r.source = str("source");
    if (auto p = json::get_string(o, "model_provider")) r.model_provider = std::string(*p);
    r.cwd = str("cwd");
    r.cli_version = str("cli_version");
    if (auto g = json::get(o, "git")) r.git = json::from_json<rollout::GitInfo>(*g);
    r.has_user_message = json::get_bool(o, "user").value_or(false);
    r.preview = str("preview");
    if (auto n = json::get_string(o, "name")) r.name = std::string(*n);
    r.size = json::get_int(o, "size");
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string index_path_for(const std::string& home, const std::string& rollout_file_name) {
  auto name = parse_rollout_name(rollout_file_name);
  if (!name) return {};
  return fmt::format("{}/sessions/{}/{}", home, name->date_dir(), kIndexFileName);
}

std::optional<std::string> append_index_record(const std::string& home, const IndexRecord& record) {
  auto name = parse_rollout_name(record.file);
  if (!name) return fmt::format("not a rollout file name: {}", record.file);
  return append_index_records(fmt::format("{}/sessions/{}", home, name->date_dir()), {record});
}

std::optional<std::string> append_index_records(const std::string& day_dir,
                                                const std::vector<IndexRecord>& records) {
  if (records.empty()) return std::nullopt;
  Fd dir(::open(day_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) return fmt::format("failed to open {}: {}", day_dir, errno_text(errno));
  // Shared: appends may run side by side; a repair rewriting the index excludes them.
  while (::flock(dir.fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  std::string path = day_dir + "/" + std::string(kIndexFileName);
  Fd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (fd.fd < 0) return fmt::format("failed to open {}: {}", path, errno_text(errno));
  std::string bytes;
  // A crash may have left half a line; start on a fresh line so this record stays whole.
  struct stat st {};
  if (::fstat(fd.fd, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(fd.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') bytes += '\n';
  }
  for (const auto& r : records) {
    bytes += encode_index_record(r);
    bytes += '\n';
  }
  if (!files::write_all(fd.fd, bytes)) return fmt::format("failed to write {}: {}", path, errno_text(errno));
  return std::nullopt;
}

}  // namespace llmx::threads
