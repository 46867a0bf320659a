// Unit tests for the thread store and its per-day index (engine.md §9.5, DECISIONS P11): order,
// pagination, filters, previews, index repair when files change behind its back, archive, lookup
// by id, and a 20,000-thread listing whose first page stays cheap.
#include "protocol/store/thread_store.hpp"

#include <doctest/doctest.h>
#include "protocol/base/files.hpp"
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "protocol/base/ids.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using namespace llmx::threads;
using Clock = std::chrono::system_clock;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kT0 = 1735732800;  // 2025-01-01T12:00:00Z

Clock::time_point at(int64_t unix_seconds) { return Clock::from_time_t(unix_seconds); }

// A UUID v7 carrying `t` as its timestamp, made unique by `n`.
std::string v7_at(Clock::time_point t, uint64_t n) {
  uint64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  return fmt::format("{:08x}-{:04x}-7000-8000-{:012x}", ms >> 16, ms & 0xffff, n);
}

std::string v4(uint64_t n) { return fmt::format("aaaaaaaa-bbbb-4ccc-8ddd-{:012x}", n); }

struct Made {
  std::string id;
  std::string path;
};

Made make(const std::string& home, int64_t unix_seconds, uint64_t n, const std::string& text = "hello",
          const std::string& provider = "litellm", const std::string& source = "cli") {
  Made m{v7_at(at(unix_seconds), n), ""};
  write_synthetic_rollout(home, at(unix_seconds), m.id, text, provider, source);
  m.path = rollout::rollout_path(home, at(unix_seconds), m.id);
  return m;
}

std::vector<std::string> ids(const ListPage& page) {
  std::vector<std::string> out;
  for (const auto& t : page.items) out.push_back(t.id);
  return out;
}

// Listing order is the file-name order, newest first.
std::vector<std::string> expected_order(std::vector<Made> made) {
  std::sort(made.begin(), made.end(), [](const Made& a, const Made& b) {
    return fs::path(a.path).filename() > fs::path(b.path).filename();
  });
  std::vector<std::string> out;
  for (const auto& m : made) out.push_back(m.id);
  return out;
}

// Every page through the end; pages other than the last must be full.
std::vector<std::string> walk(ThreadStore& store, ListQuery q) {
  std::vector<std::string> all;
  for (int guard = 0; guard < 100000; ++guard) {
    ListPage page = store.list(q);
    for (auto& id : ids(page)) all.push_back(id);
    if (!page.next_cursor) break;
    CHECK(page.items.size() == std::max<size_t>(1, q.page_size));
    q.cursor = page.next_cursor;
  }
  return all;
}

std::string index_of(const Made& m) { return fs::path(m.path).parent_path().string() + "/.index.jsonl"; }

void append_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

// A scratch home in memory when /dev/shm is there: creating 20,000 files on a busy disk measures
// the disk, not the store.
struct MemoryScratch {
  llmx::test::TempDir dir{"llmx_store", ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"};
  std::string path = dir.path();
};

// The index's mtime only tells changes apart when they fall in different timestamp ticks.
void next_tick() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

}  // namespace

TEST_CASE("thread index: previews") {
  CHECK(preview_of("  fix the tests \n") == "fix the tests");
  CHECK(preview_of("ctx\n## My request for LLMX:\n  do it  ") == "do it");
  CHECK(preview_of("## My request for LLMX:") == "");
  std::string long_text(kPreviewMaxBytes - 1, 'a');
  long_text += "é";  // 2 bytes straddling the cap
  CHECK(preview_of(long_text) == std::string(kPreviewMaxBytes - 1, 'a'));
  CHECK(preview_of(std::string(10000, 'b')).size() == kPreviewMaxBytes);
}

TEST_CASE("thread index: file names, records and heads") {
  auto n = parse_rollout_name("rollout-2025-01-02T03-04-05-0194F1B2-0000-7000-8000-000000000001.jsonl");
  REQUIRE(n);
  CHECK(n->timestamp == "2025-01-02T03-04-05");
  CHECK(n->uuid == "0194f1b2-0000-7000-8000-000000000001");
  CHECK(n->date_dir() == "2025/01/02");
  CHECK_FALSE(parse_rollout_name("rollout-2025-01-02T03-04-05-nope.jsonl"));
  CHECK_FALSE(parse_rollout_name("rollout-2025-01-02T03:04:05-0194f1b2-0000-7000-8000-000000000001.jsonl"));
  CHECK_FALSE(parse_rollout_name(".index.jsonl"));

  IndexRecord r;
  r.file = "rollout-2025-01-02T03-04-05-0194f1b2-0000-7000-8000-000000000001.jsonl";
  r.id = "0194f1b2-0000-7000-8000-000000000001";
  r.created_at = "2025-01-02T03:04:05.678Z";
  r.source = R"({"subagent":"review"})";
  r.git = rollout::GitInfo{"abc", "main", std::nullopt};
  set_first_user_message(r, "hi");
  auto back = decode_index_record(encode_index_record(r));
  REQUIRE(back);
  CHECK(encode_index_record(*back) == encode_index_record(r));
  CHECK(back->listable());
  CHECK_FALSE(back->model_provider);
  CHECK(decode_index_record(encode_index_record(removed_record(r.file)))->removed);
  CHECK_FALSE(decode_index_record("garbage"));
  CHECK_FALSE(decode_index_record(R"({"file":"not-a-rollout.jsonl"})"));
  CHECK_FALSE(decode_index_record(kIndexHeader));

  // Head: garbage skipped, context messages are not the preview, events are not counted.
  test::ScratchDir dir;
  rollout::SessionMeta meta;
  meta.id = r.id;
  meta.timestamp = r.created_at;
  std::string text = rollout::encode_line(at(kT0), meta) + "\nnot json\n" +
                     rollout::encode_line(at(kT0), user_message("<environment_context>x</environment_context>")) + "\n";
  for (int i = 0; i < 8; ++i) text += rollout::encode_line(at(kT0), assistant_message("a")) + "\n";
  std::string tail = rollout::encode_line(at(kT0), user_message("late")) + "\n" +
                     rollout::encode_line(at(kT0), EventMsg(UserMessageEvent{"late", {}})) + "\n";
  dir.write("a.jsonl", text + tail);
  auto head = read_rollout_head(dir.at("a.jsonl"));
  REQUIRE(head);
  CHECK(head->meta->id == r.id);
  CHECK_FALSE(head->has_user_message);  // beyond the 10 counted records
  CHECK_FALSE(head->first_user_text);
  dir.write("b.jsonl", rollout::encode_line(at(kT0), meta) + "\n" + tail + "{\"timestamp\":\"x\",\"ty");
  head = read_rollout_head(dir.at("b.jsonl"));
  REQUIRE(head);
  CHECK(head->has_user_message);
  CHECK(*head->first_user_text == "late");
  std::string error;
  CHECK_FALSE(read_rollout_head(dir.at("missing.jsonl"), &error));
  CHECK(error.find("missing.jsonl") != std::string::npos);

  // Lines longer than the read chunks.
  std::string big(100000, 'x');
  dir.write("c.jsonl", rollout::encode_line(at(kT0), meta) + "\n" +
                           rollout::encode_line(at(kT0), user_message(big)) + "\n" +
                           rollout::encode_line(at(kT0), EventMsg(UserMessageEvent{big, {}})) + "\n");
  head = read_rollout_head(dir.at("c.jsonl"));
  REQUIRE(head);
  CHECK(head->has_user_message);
  CHECK(head->first_user_text->size() == big.size());
  CHECK(record_from_head(*head, r.file).preview.size() == kPreviewMaxBytes);

  // An append after a crash-cut line starts a fresh line, so the record stays whole.
  dir.write(".index.jsonl", std::string(kIndexHeader) + "\n{\"file\":\"rollout-2025");
  CHECK_FALSE(append_index_records(dir.path(), {r}));
  std::string index = *dir.read(".index.jsonl");
  CHECK(index.ends_with("\n" + encode_index_record(r) + "\n"));
}

TEST_CASE("thread store: newest first, cursors give full pages with no gaps or repeats") {
  test::ScratchDir home;
  std::vector<Made> made;
  for (int i = 0; i < 13; ++i) made.push_back(make(home.path(), kT0 + (i % 4) * 86400 + i * 60, i));
  // Same second, different uuids: the uuid breaks the tie.
  made.push_back(make(home.path(), kT0 + 5000, 100));
  made.push_back(make(home.path(), kT0 + 5000, 101));
  auto expected = expected_order(made);
  ThreadStore store(home.path());
  for (size_t size : {1, 2, 3, 5, 15, 25}) {
    ListQuery q;
    q.page_size = size;
    CAPTURE(size);
    CHECK(walk(store, q) == expected);
  }
  ListQuery q;
  q.page_size = 0;  // < 1 → 1
  ListPage page = store.list(q);
  CHECK(page.items.size() == 1);
  CHECK(page.items[0].id == expected[0]);
  CHECK(page.next_cursor);
  const ThreadSummary& t = page.items[0];
  CHECK(t.preview == "hello");
  CHECK(t.source == "cli");
  CHECK(*t.model_provider == "litellm");
  CHECK(t.path.starts_with(home.path() + "/sessions/"));
  CHECK(t.created_at.ends_with("Z"));
  CHECK(t.updated_unix >= t.created_unix);
  CHECK(t.updated_at.size() == 24);
  CHECK_FALSE(t.archived);

  q.page_size = 15;
  page = store.list(q);
  CHECK(page.items.size() == 15);
  CHECK_FALSE(page.next_cursor);  // exactly the end: no empty page after it
}

TEST_CASE("thread store: invalid cursors are errors") {
  test::ScratchDir home;
  ThreadStore store(home.path());
  for (const char* bad : {"nope", "2025-01-01T00-00-00", "2025-01-01T00:00:00|0194f1b2-0000-7000-8000-000000000001",
                          "2025-01-01T00-00-00|not-a-uuid"}) {
    ListQuery q;
    q.cursor = bad;
    CAPTURE(bad);
    try {
      store.list(q);
      FAIL("no error");
    } catch (const StoreError& e) {
      CHECK(e.kind() == StoreError::Kind::invalid_cursor);
      CHECK(std::string(e.what()).find(bad) != std::string::npos);
    }
  }
  ListQuery q;
  q.cursor = "";
  CHECK(store.list(q).items.empty());
}

TEST_CASE("thread store: provider and source filters") {
  test::ScratchDir home;
  Made a = make(home.path(), kT0 + 1, 1, "a", "litellm", "cli");
  Made b = make(home.path(), kT0 + 2, 2, "b", "openai", "exec");
  Made c = make(home.path(), kT0 + 3, 3, "c", "", "mcp");  // no provider recorded
  Made d = make(home.path(), kT0 + 4, 4, "d", "openai", R"({"subagent":"review"})");
  ThreadStore store(home.path());
  ListQuery q;
  ListPage all = store.list(q);
  CHECK(ids(all) == std::vector<std::string>{d.id, c.id, b.id, a.id});
  CHECK(all.items[3].created_unix == kT0 + 1);
  CHECK(all.items[3].created_at == "2025-01-01T12:00:01.000Z");
  CHECK_FALSE(all.items[1].model_provider);
  q.model_providers = {"openai"};
  CHECK(ids(store.list(q)) == std::vector<std::string>{d.id, b.id});
  q.model_providers = {"litellm"};  // the default provider also matches threads without one
  CHECK(ids(store.list(q)) == std::vector<std::string>{c.id, a.id});
  q.default_provider = "other";
  CHECK(ids(store.list(q)) == std::vector<std::string>{a.id});
  q = ListQuery{};
  q.sources = {"cli", "mcp"};
  CHECK(ids(store.list(q)) == std::vector<std::string>{c.id, a.id});
  q.sources = {R"({"subagent":"review"})"};
  ListPage page = store.list(q);
  CHECK(ids(page) == std::vector<std::string>{d.id});
  CHECK(page.items[0].source == R"({"subagent":"review"})");
  // A filter that drops most threads still gives full pages.
  q = ListQuery{};
  q.page_size = 1;
  q.sources = {"cli", "exec"};
  CHECK(walk(store, q) == std::vector<std::string>{b.id, a.id});
  // A folder (ACP session/list): synthetic threads all started in /tmp.
  q = ListQuery{};
  q.cwd = "/tmp";
  CHECK(ids(store.list(q)).size() == 4);
  q.cwd = "/elsewhere";
  CHECK(ids(store.list(q)).empty());
}

TEST_CASE("thread store: the writer's records, and a writer that died before the second one") {
  test::ScratchDir home;
  Made old = make(home.path(), kT0, 1, "old");
  ThreadStore store(home.path());
  CHECK(store.list({}).items.size() == 1);  // builds the index

  // What the rollout writer does: create the file, record it, record the first user message.
  next_tick();
  std::string id = v7_at(at(kT0 + 60), 2);
  std::string path = rollout::rollout_path(home.path(), at(kT0 + 60), id);
  rollout::SessionMeta meta;
  meta.id = id;
  meta.timestamp = rollout::format_timestamp(at(kT0 + 60));
  meta.source = JsonOf<SessionSource>{"\"exec\""};
  append_text(path, rollout::encode_line(at(kT0 + 60), meta) + "\n");
  IndexRecord rec = record_for(meta, path);
  CHECK_FALSE(append_index_record(home.path(), rec));
  size_t repairs = store.stats().repairs;
  CHECK(ids(store.list({})) == std::vector<std::string>{old.id});  // no user message yet
  CHECK(store.stats().repairs == repairs);                        // the record kept the day clean
  append_text(path, rollout::encode_line(at(kT0 + 60), user_message("## My request for LLMX: go")) + "\n" +
                        rollout::encode_line(at(kT0 + 60), EventMsg(UserMessageEvent{"go", {}})) + "\n");
  set_first_user_message(rec, "## My request for LLMX: go");
  CHECK_FALSE(append_index_record(home.path(), rec));
  ListPage page = store.list({});
  CHECK(ids(page) == std::vector<std::string>{id, old.id});
  CHECK(page.items[0].preview == "go");
  CHECK(page.items[0].source == "exec");
  CHECK(store.stats().repairs == repairs);

  // A writer that recorded the file but died before recording the user message.
  std::string id3 = v7_at(at(kT0 + 120), 3);
  std::string path3 = rollout::rollout_path(home.path(), at(kT0 + 120), id3);
  meta.id = id3;
  append_text(path3, rollout::encode_line(at(kT0 + 120), meta) + "\n");
  append_index_record(home.path(), record_for(meta, path3));
  CHECK(store.list({}).items.size() == 2);
  append_text(path3, rollout::encode_line(at(kT0 + 120), user_message("third")) + "\n" +
                         rollout::encode_line(at(kT0 + 120), EventMsg(UserMessageEvent{"third", {}})) + "\n");
  page = store.list({});
  REQUIRE(page.items.size() == 3);
  CHECK(page.items[0].id == id3);
  CHECK(page.items[0].preview == "third");
  CHECK(files::read(index_of(old)).value_or("").find("\"preview\":\"third\"") != std::string::npos);  // recorded for it
}

TEST_CASE("thread store: a missing, stale or damaged index is repaired from the files") {
  test::ScratchDir home;
  std::vector<Made> made;
  for (int i = 0; i < 6; ++i) made.push_back(make(home.path(), kT0 + i * 600, i));
  ThreadStore store(home.path());
  CHECK(ids(store.list({})) == expected_order(made));
  std::string index = index_of(made[0]);
  REQUIRE(fs::exists(index));
  CHECK(files::read(index).value_or("").starts_with(std::string(kIndexHeader) + "\n"));

  SUBCASE("missing") {
    fs::remove(index);
    ThreadStore fresh(home.path());
    CHECK(ids(fresh.list({})) == expected_order(made));
    CHECK(fresh.stats().index_rewrites == 1);
    CHECK(ids(store.list({})) == expected_order(made));
    CHECK(fs::exists(index));
  }
  SUBCASE("a file dropped in and a file deleted by hand") {
    next_tick();
    made.push_back(make(home.path(), kT0 + 3000, 77, "dropped in"));
    fs::remove(made[2].path);
    made.erase(made.begin() + 2);
    size_t heads = store.stats().heads_read;
    ListPage page = store.list({});
    CHECK(ids(page) == expected_order(made));
    CHECK(store.stats().heads_read == heads + 1);  // only the new file's head
    CHECK(page.items[0].preview == "dropped in");
    // The repair was written down: a new store does not repair again.
    ThreadStore fresh(home.path());
    CHECK(ids(fresh.list({})) == expected_order(made));
    CHECK(fresh.stats().repairs == 0);
  }
  SUBCASE("garbage lines and a cut last line") {
    append_text(index, "garbage\n{\"file\":\"rollout-2025");
    ThreadStore fresh(home.path());
    CHECK(ids(fresh.list({})) == expected_order(made));
    CHECK(fresh.stats().index_rewrites == 1);
    std::string text = files::read(index).value_or("");
    CHECK(text.find("garbage") == std::string::npos);
    CHECK(text.back() == '\n');
  }
  SUBCASE("a file deleted right after a listing is not listed") {
    fs::remove(made[5].path);
    ListPage page = store.list({});
    CHECK(page.items.size() == 5);
    CHECK(page.items[0].id == made[4].id);
  }
}

TEST_CASE("thread store: garbage and cut lines inside rollouts") {
  test::ScratchDir home;
  Made a = make(home.path(), kT0, 1, "first");
  // Garbage between the lines, a cut last line: still listed.
  std::string text = files::read(a.path).value_or("");
  std::string garbled = text.substr(0, text.find('\n') + 1) + "{{{ not json\n" + text.substr(text.find('\n') + 1) +
                        "{\"timestamp\":\"2025";
  std::ofstream(a.path, std::ios::binary | std::ios::trunc) << garbled;
  // Only garbage: known, never listed.
  Made b = make(home.path(), kT0 + 10, 2);
  std::ofstream(b.path, std::ios::binary | std::ios::trunc) << "junk\nmore junk";
  // Empty file.
  Made c = make(home.path(), kT0 + 20, 3);
  std::ofstream(c.path, std::ios::binary | std::ios::trunc);
  ThreadStore store(home.path());
  ListPage page = store.list({});
  CHECK(ids(page) == std::vector<std::string>{a.id});
  CHECK(page.items[0].preview == "first");
  CHECK(page.warnings.empty());
}

TEST_CASE("thread store: an unreadable day is a warning, not a failure") {
  test::ScratchDir home;
  Made a = make(home.path(), kT0, 1);
  Made b = make(home.path(), kT0 + 2 * 86400, 2);
  std::string bad_day = fs::path(b.path).parent_path().string();
  if (geteuid() == 0) {
    // root ignores permissions; a symlink loop is unreadable for everyone.
    fs::remove_all(bad_day);
    fs::create_symlink(fs::path(bad_day).filename(), bad_day);
  } else {
    ::chmod(bad_day.c_str(), 0);
  }
  ThreadStore store(home.path());
  ListPage page = store.list({});
  ::chmod(bad_day.c_str(), 0755);
  CHECK(ids(page) == std::vector<std::string>{a.id});
  REQUIRE(page.warnings.size() == 1);
  CHECK(page.warnings[0].find(bad_day) != std::string::npos);
}

TEST_CASE("thread store: archive and unarchive") {
  test::ScratchDir home;
  Made a = make(home.path(), kT0, 1, "keep");
  Made b = make(home.path(), kT0 + 60, 2, "archive me");
  ThreadStore store(home.path());
  CHECK(store.list({}).items.size() == 2);

  using K = StoreError::Kind;
  auto error_of = [&](auto&& fn) -> std::pair<K, std::string> {
    try {
      fn();
    } catch (const StoreError& e) {
      return {e.kind(), e.what()};
    }
    return {K::io, "no error"};
  };
  home.write("elsewhere/rollout.jsonl", "x");
  auto [k1, m1] = error_of([&] { store.archive(b.id, home.at("elsewhere/rollout.jsonl")); });
  CHECK(k1 == K::invalid_request);
  CHECK(m1 == fmt::format("rollout path `{}` must be in sessions directory", home.at("elsewhere/rollout.jsonl")));
  auto [k2, m2] = error_of([&] { store.archive(b.id, a.path); });
  CHECK(k2 == K::invalid_request);
  CHECK(m2 == fmt::format("rollout path `{}` does not match conversation id {}", a.path, b.id));
  auto [k3, m3] = error_of([&] { store.archive(b.id, home.at("sessions/nope.jsonl")); });
  CHECK(k3 == K::invalid_request);
  auto [k4, m4] = error_of([&] { store.archive(v4(9)); });
  CHECK(k4 == K::not_found);
  CHECK(m4 == fmt::format("no rollout found for conversation id {}", v4(9)));
  CHECK(error_of([&] { store.archive("nope"); }).first == K::invalid_id);

  // A path with `..` in it canonicalizes into sessions/.
  std::string roundabout = home.path() + "/sessions/../sessions/" +
                           fs::relative(b.path, home.path() + "/sessions").string();
  std::string archived = store.archive(b.id, roundabout);
  CHECK(archived == home.path() + "/archived_sessions/" + fs::path(b.path).filename().string());
  CHECK(fs::exists(archived));
  CHECK_FALSE(fs::exists(b.path));
  size_t repairs = store.stats().repairs;
  CHECK(ids(store.list({})) == std::vector<std::string>{a.id});
  CHECK(store.stats().repairs == repairs);  // the removal was recorded, the day is clean
  CHECK(store.find_archived_path(b.id) == archived);
  CHECK_FALSE(store.find_path(b.id));
  ListPage arch = store.list_archived({});
  REQUIRE(arch.items.size() == 1);
  CHECK(arch.items[0].archived);
  CHECK(arch.items[0].preview == "archive me");

  CHECK(store.unarchive(b.id) == b.path);
  CHECK(ids(store.list({})) == std::vector<std::string>{b.id, a.id});
  CHECK(store.stats().repairs == repairs);
  CHECK(store.list_archived({}).items.empty());
  CHECK(error_of([&] { store.unarchive(b.id); }).first == K::not_found);

  // By id only.
  archived = store.archive(a.id);
  CHECK(fs::exists(archived));
  CHECK(ids(store.list({})) == std::vector<std::string>{b.id});
}

TEST_CASE("thread store: find by id") {
  test::ScratchDir home;
  Made a = make(home.path(), kT0, 1);
  // A v4 id and a v7 id whose file lives on another day than its timestamp says.
  std::string legacy = v4(1);
  write_synthetic_rollout(home.path(), at(kT0 - 40 * 86400), legacy, "old", "litellm", "cli");
  std::string misplaced = v7_at(at(kT0), 2);
  write_synthetic_rollout(home.path(), at(kT0 + 10 * 86400), misplaced, "m", "litellm", "cli");
  ThreadStore store(home.path());
  CHECK(store.find_path(a.id) == a.path);
  std::string upper = a.id;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(store.find_path(upper) == a.path);
  CHECK(store.find_path(legacy) == rollout::rollout_path(home.path(), at(kT0 - 40 * 86400), legacy));
  CHECK(store.find_path(misplaced) == rollout::rollout_path(home.path(), at(kT0 + 10 * 86400), misplaced));
  CHECK_FALSE(store.find_path(v4(99)));
  CHECK_THROWS_AS(store.find_path("0194f1b2"), StoreError);
  CHECK(store.summary_of(a.path).id == a.id);
  CHECK_THROWS_AS(store.summary_of(home.at("nope.jsonl")), StoreError);
}

TEST_CASE("thread store: 20,000 threads, the first page stays cheap") {
  MemoryScratch home;
  constexpr int kThreads = 20000;
  constexpr int64_t kSpacing = 60 * 86400 / kThreads;  // ~60 days
  auto t_write = std::chrono::steady_clock::now();
  std::set<std::string> listable;
  std::vector<std::string> newest;
  for (int i = kThreads - 1; i >= 0; --i) {
    auto t = at(kT0 + i * kSpacing);
    std::string id = v7_at(t, i);
    bool has_user = i % 20 != 7;  // some threads never got a user message
    write_synthetic_rollout(home.path, t, id, has_user ? fmt::format("task {}", i) : "",
                            i % 3 ? "litellm" : "openai", "cli");
    if (has_user) {
      listable.insert(id);
      if (newest.size() < 25) newest.push_back(id);
    }
  }
  auto ms_since = [](auto start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  MESSAGE(fmt::format("wrote {} rollouts in {:.0f} ms", kThreads, ms_since(t_write)));

  ThreadStore store(home.path);
  auto t_cold = std::chrono::steady_clock::now();
  ListPage first = store.list({});
  double cold = ms_since(t_cold);
  CHECK(ids(first) == newest);
  CHECK(first.next_cursor);
  CHECK(store.stats().repairs <= 2);  // only the days the page needed
  CHECK(store.stats().heads_read <= 2 * 86400 / kSpacing + 2);

  StoreStats before = store.stats();
  auto t_warm = std::chrono::steady_clock::now();
  ListPage again = store.list({});
  double warm = ms_since(t_warm);
  CHECK(ids(again) == newest);
  CHECK(store.stats().heads_read == before.heads_read);
  CHECK(store.stats().index_reads == before.index_reads);
  CHECK(store.stats().index_tail_reads == before.index_tail_reads);
  CHECK(store.stats().days_reused > before.days_reused);

  auto t_walk = std::chrono::steady_clock::now();
  std::vector<std::string> all = walk(store, {});
  double walk_ms = ms_since(t_walk);
  CHECK(all.size() == listable.size());
  CHECK(std::set<std::string>(all.begin(), all.end()) == listable);

  ThreadStore reopened(home.path);  // indexes on disk, nothing in memory
  auto t_reopen = std::chrono::steady_clock::now();
  ListPage from_disk = reopened.list({});
  double reopen = ms_since(t_reopen);
  CHECK(ids(from_disk) == newest);
  CHECK(reopened.stats().repairs == 0);
  CHECK(reopened.stats().heads_read == 0);
  auto t_rewalk = std::chrono::steady_clock::now();
  CHECK(walk(reopened, {}).size() == listable.size());
  double rewalk = ms_since(t_rewalk);

  CHECK(cold < 1000);
  CHECK(warm < 50);
  CHECK(reopen < 100);
  MESSAGE(fmt::format("first page: cold (no index) {:.1f} ms, warm {:.2f} ms, from disk indexes {:.1f} ms; "
                      "all {} pages: cold {:.0f} ms, from disk indexes {:.0f} ms",
                      cold, warm, reopen, (listable.size() + 24) / 25, walk_ms, rewalk));
}
