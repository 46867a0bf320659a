// Rollout files (engine.md §9): one JSON line per recorded item under
// `<home>/sessions/YYYY/MM/DD/rollout-<local ts>-<uuid>.jsonl`. This header is plain code: line
// types, their encoding, the persistence policy, the path and the loader that rebuilds history
// when resuming (DECISIONS P12: garbage lines and a crash-cut last line are skipped and reported).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/core/events.hpp"
#include "protocol/core/items.hpp"
#include "protocol/core/policy.hpp"
#include "protocol/base/reflect.hpp"

namespace llmx::rollout {

inline constexpr std::string_view kOriginator = "llmx_cli_rs";
inline constexpr std::string_view kCliVersion = "0.1.8";

struct GitInfo {
  std::optional<std::string> commit_hash;
  std::optional<std::string> branch;
  std::optional<std::string> repository_url;
  LLMX_FIELDS(v("commit_hash", s.commit_hash); v("branch", s.branch);
              v("repository_url", s.repository_url))
  friend bool operator==(const GitInfo&, const GitInfo&) = default;
};

// Payload of a `session_meta` line. `source` is kept as JSON because it is either a string
// ("cli", "vscode", "exec", "mcp", "unknown") or an object ({"subagent": ...}).
struct SessionMeta {
  std::string id;
  std::string timestamp;  // creation time, UTC, YYYY-MM-DDThh:mm:ss.mmmZ
  std::string cwd;
  std::string originator = std::string(kOriginator);
  std::string cli_version = std::string(kCliVersion);
  Nullable<std::string> instructions;  // written as null when absent
  JsonOf<SessionSource> source{"\"vscode\""};
  std::optional<std::string> model_provider;
  std::optional<GitInfo> git;
  std::optional<std::string> thread_source;  // who started the thread (`exec --thread-source`)
  LLMX_FIELDS(v("id", s.id); v("timestamp", s.timestamp); v("cwd", s.cwd);
              v("originator", s.originator); v("cli_version", s.cli_version);
              v("instructions", s.instructions); v("source", s.source, Field::defaulted);
              v("model_provider", s.model_provider); v("git", s.git);
              v("thread_source", s.thread_source))
  // `source` as a plain string when it is one ("cli"), else its JSON text.
  std::string source_name() const;
};

struct TurnContext {
  std::string cwd;
  AskForApproval approval_policy = AskForApproval::on_request;
  SandboxPolicy sandbox_policy;
  std::string model;
  std::optional<std::string> effort;
  std::string summary = "auto";
  LLMX_FIELDS(v("cwd", s.cwd); v("approval_policy", s.approval_policy);
              v("sandbox_policy", s.sandbox_policy); v("model", s.model); v("effort", s.effort);
              v("summary", s.summary))
};

struct Compacted {
  std::string message;
  LLMX_FIELDS(v("message", s.message))
};

// What one line carries; the alternative decides `type`:
// session_meta | response_item | event_msg | turn_context | compacted.
using RolloutItem = std::variant<SessionMeta, ResponseItem, EventMsg, TurnContext, Compacted>;

std::string_view item_type(const RolloutItem& item);

struct RolloutLine {
  std::string timestamp;  // UTC, YYYY-MM-DDThh:mm:ss.mmmZ
  RolloutItem item;
  std::string_view type() const { return item_type(item); }
};

// `YYYY-MM-DDThh:mm:ss.mmmZ` in UTC (milliseconds truncated).
std::string format_timestamp(std::chrono::system_clock::time_point t);

// `{"timestamp":"…","type":"…","payload":{…}}`, compact, no newline (the writer appends it).
std::string encode_line(const RolloutLine& line);
std::string encode_line(std::chrono::system_clock::time_point t, const RolloutItem& item);

// nullopt for anything that is not a complete, well-formed line of a known type.
std::optional<RolloutLine> decode_line(std::string_view text);

// Persistence policy (§9.3). session_meta / turn_context / compacted are always written.
bool should_persist(const EventMsg& ev);
bool should_persist(const ResponseItem& item);
bool should_persist(const RolloutItem& item);

// `<home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`, local time (§9.1).
std::string rollout_path(const std::string& llmx_home, std::chrono::system_clock::time_point t,
                         const std::string& conversation_id);

// True for a `user` message that is a user turn item (§1.11: not the AGENTS.md / user
// instructions message, not environment context, not a user shell command).
bool is_user_turn_message(const ResponseItem& item);

// The bytes of user messages a compacted history keeps (§1.12 step 8): 20000 tokens x 4. A
// smaller auto-compaction limit lowers it (compaction::user_message_budget).
inline constexpr size_t kUserMessageBudgetBytes = 80000;

// The history after compaction (§1.12 step 8): initial context + the user messages that fit
// `user_budget` bytes (newest first, the first that does not fit is middle-truncated, then
// chronological order again) + the summary as a user message ("(no summary available)" if empty).
std::vector<ResponseItem> build_compacted_history(const std::vector<ResponseItem>& initial_context,
                                                  const std::vector<std::string>& user_messages,
                                                  const std::string& summary,
                                                  size_t user_budget = kUserMessageBudgetBytes);

// Calls fn(line, terminated) for every line of a rollout file's text, blank ones included, without
// its '\n' or a trailing '\r'; `terminated` is false for a last line without '\n' (a cut write).
template <class F>
void for_each_line(std::string_view text, F&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool terminated = nl != std::string_view::npos;
    auto line = text.substr(pos, terminated ? nl - pos : std::string_view::npos);
    pos = terminated ? nl + 1 : text.size();
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, terminated);
  }
}

// Where `history` is cut to drop its last `n` turns (thread/rollback): at the start of the n-th
// last turn when `turn_starts` (history lengths where turns began) knows it, else before the
// first user turn message (every turn goes), or nowhere when there is none.
// `Items` is the stored history (a vector) or the live one (History).
template <class Items>
size_t rollback_cut(const Items& history, const std::vector<size_t>& turn_starts, uint32_t n) {
  if (n == 0) return history.size();
  if (n <= turn_starts.size()) return std::min(turn_starts[turn_starts.size() - n], history.size());
  size_t i = 0;
  for (const auto& item : history) {
    if (is_user_turn_message(item)) return std::min(i, turn_starts.empty() ? i : turn_starts.front());
    ++i;
  }
  return turn_starts.empty() ? history.size() : std::min(turn_starts.front(), history.size());
}
// Drops the last `n` turns: `history` is cut at rollback_cut, and their starts go too.
template <class Items>
void drop_last_turns(Items& history, std::vector<size_t>& turn_starts, uint32_t n) {
  const size_t cut = rollback_cut(history, turn_starts, n);
  if constexpr (requires { history.truncate(cut); }) {
    history.truncate(cut);  // History: shorter without touching what its copies hold
  } else {
    history.resize(cut);
  }
  turn_starts.resize(turn_starts.size() - std::min<size_t>(n, turn_starts.size()));
}

struct LoadedRollout {
  std::optional<SessionMeta> meta;   // the first session_meta line
  std::vector<ResponseItem> history;  // rebuilt per §9.4, thread_rolled_back markers applied
  std::vector<EventMsg> events;       // persisted event_msg payloads (initial_messages)
  std::vector<size_t> turn_starts;    // history length at each turn_context since the last compaction
  std::optional<TurnContext> last_turn_context;
  size_t bad_lines = 0;               // unparseable complete lines (blank lines not counted)
  size_t compactions = 0;             // `compacted` lines replayed
  bool truncated_last_line = false;   // last line without '\n' that does not decode
  std::vector<std::string> warnings;  // one per skipped line
};

// What a fork copies into its own file: the complete, well-formed lines of a rollout, as written,
// except session_meta (the fork has its own) and thread_name_updated (the title stays with the
// original).
std::vector<std::string> lines_to_fork(std::string_view file_contents);

// Replays a rollout file's contents. At a `compacted` line the history becomes
// build_compacted_history(initial_context, <user turn messages of the history so far>, message,
// user_budget); `initial_context` and `user_budget` come from the caller's current settings.
LoadedRollout load(std::string_view file_contents, const std::vector<ResponseItem>& initial_context = {},
                   size_t user_budget = kUserMessageBudgetBytes);

}  // namespace llmx::rollout
