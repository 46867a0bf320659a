#include "actors/rollout_store.hpp"
#include "protocol/base/files.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "protocol/workspace/git_info.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/log.hpp"
#include "protocol/store/thread_index.hpp"
#include "transport/rollout_writer.hpp"

namespace llmx {

namespace {

// Open rollout files kept between batches: a quarter of the descriptor limit, at most 4096 —
// reopening a file for every batch made 10,000 live conversations cost twice the CPU.
size_t open_file_budget() {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1024;
  return std::clamp<size_t>(rl.rlim_cur / 4, 64, 4096);
}

struct StoreState {
  StoreState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  RolloutWriter writer{open_file_budget()};
  bool flush_scheduled = false;
  std::map<std::string, caf::actor_addr> owners;  // rollout path → conversation, for failures
  // Index records (by rollout path) to append once the batch that creates or fills their file
  // is on disk.
  std::vector<std::pair<std::string, threads::IndexRecord>> index_records;
  // Git facts per cwd, read at most once a second: thousands of conversations in one
  // repository need not walk the same .git files each.
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point, std::optional<rollout::GitInfo>>> git;
  // Index records of the files this process created, kept to add the preview later.
  std::map<std::string, threads::IndexRecord> records;
  std::map<std::string, std::unique_ptr<threads::ThreadStore>> stores;  // by home
  static inline const char* name = "llmx.rollout_store";
};

using store_ptr = rollout_store_actor::stateful_pointer<StoreState>;

threads::ThreadStore& store_for(store_ptr self, const std::string& home) {
  auto& s = self->state.stores[home];
  if (!s) s = std::make_unique<threads::ThreadStore>(home);
  return *s;
}

// The rollout a ref names: its path, else the file of its id under sessions/; nullopt when neither.
std::optional<std::string> path_of(store_ptr self, const ThreadRef& ref) {
  if (ref.path) return ref.path;
  if (ref.id) return store_for(self, ref.home).find_path(*ref.id);
  return std::nullopt;
}

caf::error request_error(std::string msg) { return refuse(Refusal::request, std::move(msg)); }
caf::error internal_error(std::string msg) { return refuse(Refusal::internal, std::move(msg)); }

caf::error from_store_error(const threads::StoreError& e) {
  if (e.kind() == threads::StoreError::Kind::io) return internal_error(e.what());
  return request_error(e.what());
}

void report(store_ptr self, std::vector<WriteFailure> failures) {
  for (auto& f : failures) {
    log::warn("rollout: {}", f.message);
    auto it = self->state.owners.find(f.path);
    if (it == self->state.owners.end()) continue;
    if (auto owner = caf::actor_cast<conversation_actor>(it->second))
      self->send(owner, RolloutFailed{f.path, std::move(f.message)});
  }
}

void write_batch(store_ptr self) {
  auto& st = self->state;
  st.flush_scheduled = false;
  auto failures = st.writer.flush();
  report(self, failures);
  // Index records follow their file's lines, so the index never names a thread whose lines
  // are not on disk yet (and the day directory's index is newer than the file it lists).
  std::map<std::string, std::vector<threads::IndexRecord>> by_day;  // one locked append per day
  for (auto& [path, rec] : st.index_records) {
    bool failed = false;
    for (auto& f : failures) failed = failed || f.path == path;
    if (!failed) by_day[std::filesystem::path(path).parent_path().string()].push_back(std::move(rec));
  }
  st.index_records.clear();
  for (auto& [day, recs] : by_day)
    if (auto err = threads::append_index_records(day, recs)) log::warn("rollout index: {}", *err);
}

std::string read_file(const std::string& path) {
  auto text = files::read(path);
  if (!text) throw threads::StoreError(threads::StoreError::Kind::io, "cannot read the file");
  return std::move(*text);
}

rollout_store_actor::behavior_type store_impl(store_ptr self) {
  return {
      [=](RolloutAppend& a) {
        auto& st = self->state;
        std::vector<std::string> lines;
        if (a.meta) {
          if (!a.meta->git) {
            auto now = std::chrono::steady_clock::now();
            auto& cached = st.git[a.meta->cwd];
            if (cached.first == std::chrono::steady_clock::time_point{} || now - cached.first > std::chrono::seconds(1))
              cached = {now, read_git_info(a.meta->cwd)};
            a.meta->git = cached.second;
          }
          lines.push_back(rollout::encode_line(std::chrono::system_clock::now(), *a.meta));
          auto rec = threads::record_for(*a.meta, a.path);
          st.records[a.path] = rec;
          st.index_records.emplace_back(a.path, std::move(rec));
        }
        if (a.owner) st.owners[a.path] = caf::actor_cast<caf::actor_addr>(a.owner);
        if (lines.empty()) {
          st.writer.append(a.path, a.lines, a.sync);
        } else {
          lines.insert(lines.end(), std::make_move_iterator(a.lines.begin()), std::make_move_iterator(a.lines.end()));
          st.writer.append(a.path, lines, a.sync);
        }
        if (a.first_user_message) {
          if (auto it = st.records.find(a.path); it != st.records.end()) {
            threads::set_first_user_message(it->second, *a.first_user_message);
            st.index_records.emplace_back(a.path, it->second);
            st.records.erase(it);  // listable now: nothing more to add to its record
          }
        }
        if (a.name) {  // a rename: the index record gets the title (the file's lines first)
          if (auto it = st.records.find(a.path); it != st.records.end()) {
            it->second.name = a.name;  // not listable yet: the record waits for its first message
          } else {
            write_batch(self);
            if (auto head = threads::read_rollout_head(a.path)) {
              auto rec = threads::record_from_head(*head, std::filesystem::path(a.path).filename().string());
              rec.name = a.name;
              st.index_records.emplace_back(a.path, std::move(rec));
            }
          }
        }
        if (a.close) {  // the conversation has ended: write its lines now and let the file go
          write_batch(self);
          report(self, st.writer.close(a.path));
          st.owners.erase(a.path);
          st.records.erase(a.path);
          return;
        }
        if (!st.flush_scheduled) {
          st.flush_scheduled = true;
          self->send(self, flush_atom::value);
        }
      },
      [=](flush_atom) { write_batch(self); },
      [=](sync_atom) -> bool {
        write_batch(self);
        return true;
      },
      [=](ListThreads& req) -> caf::result<ThreadPage> {
        write_batch(self);  // what this process wrote must be listable
        try {
          return ThreadPage{store_for(self, req.home).list(req.query)};
        } catch (const threads::StoreError& e) {
          return from_store_error(e);
        } catch (const std::exception& e) {
          return internal_error(e.what());
        }
      },
      [=](LoadThread& req) -> caf::result<LoadedThread> {
        write_batch(self);
        try {
          auto& ref = req.ref;
          std::string path;
          if (ref.path) {
            path = *ref.path;
          } else if (ref.id) {
            auto found = store_for(self, ref.home).find_path(*ref.id);
            if (!found) return request_error(fmt::format("no rollout found for conversation id {}", *ref.id));
            path = *found;
          } else {
            return request_error("either path, conversation id or non empty history must be provided");
          }
          std::string text;
          try {
            text = read_file(path);
          } catch (const threads::StoreError& e) {
            return request_error(fmt::format("failed to load rollout `{}`: {}", path, e.what()));
          }
          if (text.empty()) return request_error(fmt::format("failed to load rollout `{}`: empty session file", path));
          auto loaded = rollout::load(text, req.initial_context, req.user_budget);
          if (!loaded.meta)
            return request_error(fmt::format("failed to load rollout `{}`: failed to parse conversation ID from rollout file", path));
          if (ref.id && !ref.path && loaded.meta->id != *ref.id)
            return request_error(fmt::format("failed to load rollout `{}` for conversation {}: the file belongs to {}",
                                             path, *ref.id, loaded.meta->id));
          LoadedThread out;
          out.id = loaded.meta->id;
          out.path = path;
          out.history = std::move(loaded.history);
          out.turn_starts = std::move(loaded.turn_starts);
          out.initial_messages = JsonOf<RecordedEvents>{json::to_json(loaded.events)};
          for (const auto& ev : loaded.events)
            if (auto* um = ev.get_if<UserMessageEvent>()) {
              out.has_user_message = true;
              if (req.with_lines && !out.first_user_message) out.first_user_message = um->message;
            }
          if (req.with_lines) out.lines = rollout::lines_to_fork(text);
          out.warnings = std::move(loaded.warnings);
          for (const auto& w : out.warnings) log::warn("rollout {}: {}", path, w);
          return out;
        } catch (const threads::StoreError& e) {
          return from_store_error(e);
        } catch (const std::exception& e) {
          return internal_error(e.what());
        }
      },
      [=](summary_atom, ThreadRef& ref) -> caf::result<ThreadSummaryReply> {
        write_batch(self);  // a brand-new thread's head must be on disk
        try {
          auto path = path_of(self, ref);
          if (!path) return request_error(fmt::format("no rollout found for conversation id {}", ref.id.value_or("")));
          return ThreadSummaryReply{store_for(self, ref.home).summary_of(*path)};
        } catch (const threads::StoreError& e) {
          return from_store_error(e);
        } catch (const std::exception& e) {
          return internal_error(e.what());
        }
      },
      [=](ReadThread& req) -> caf::result<StoredThread> {
        write_batch(self);  // what this process wrote must be read back
        try {
          auto path = path_of(self, req.ref);
          if (!path) return request_error(fmt::format("no rollout found for thread id {}", req.ref.id.value_or("")));
          StoredThread out{store_for(self, req.ref.home).summary_of(*path), {}};
          try {
            out.text = read_file(*path);
          } catch (const threads::StoreError& e) {
            return internal_error(fmt::format("failed to load rollout `{}`: {}", *path, e.what()));
          }
          return out;
        } catch (const threads::StoreError& e) {
          return from_store_error(e);
        } catch (const std::exception& e) {
          return internal_error(e.what());
        }
      },
      [=](archive_atom, ThreadRef& ref) -> caf::result<std::string> {
        write_batch(self);
        try {
          if (!ref.id) return request_error("a conversation id is required");
          if (auto path = path_of(self, ref)) self->state.writer.close(*path);  // nothing may be written there
          return store_for(self, ref.home).archive(*ref.id, ref.path);
        } catch (const threads::StoreError& e) {
          return from_store_error(e);
        } catch (const std::exception& e) {
          return internal_error(e.what());
        }
      },
      [=](unarchive_atom, ThreadRef& ref) -> caf::result<std::string> {
        try {
          if (!ref.id) return request_error("a conversation id is required");
          return store_for(self, ref.home).unarchive(*ref.id);
        } catch (const threads::StoreError& e) {
          return from_store_error(e);
        } catch (const std::exception& e) {
          return internal_error(e.what());
        }
      },
  };
}

}  // namespace

rollout_store_actor spawn_rollout_store(caf::actor_system& sys) { return sys.spawn<caf::detached>(store_impl); }


}  // namespace llmx
