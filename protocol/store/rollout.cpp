#include "protocol/store/rollout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "protocol/base/json_codec.hpp"

namespace llmx::rollout {

namespace {


template <class T>
constexpr std::string_view type_of() {
  if constexpr (std::is_same_v<T, SessionMeta>) return "session_meta";
  if constexpr (std::is_same_v<T, ResponseItem>) return "response_item";
  if constexpr (std::is_same_v<T, EventMsg>) return "event_msg";
  if constexpr (std::is_same_v<T, TurnContext>) return "turn_context";
  if constexpr (std::is_same_v<T, Compacted>) return "compacted";
}

template <class T>
bool try_decode(std::string_view type, json::Element payload, RolloutItem& out) {
  if (type != type_of<T>()) return false;
  T x{};
  json::read_value(payload, x);
  out = std::move(x);
  return true;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  s.remove_prefix(i);
  if (s.size() < prefix.size()) return false;
  for (size_t j = 0; j < prefix.size(); ++j)
    if (std::tolower(static_cast<unsigned char>(s[j])) !=
        std::tolower(static_cast<unsigned char>(prefix[j])))
      return false;
  return true;
}

// Keeps head and tail (cut at line boundaries) within `budget` bytes, marker included.
std::string truncate_middle_budget(const std::string& text, size_t budget) {
  if (text.size() <= budget) return text;
  size_t removed_guess = text.size() - budget;
  std::string marker = fmt::format("…{} tokens truncated…\n", (removed_guess + 3) / 4);
  if (marker.size() >= budget) return marker.substr(0, 0);
  size_t keep = budget - marker.size();
  size_t head_len = keep / 2;
  size_t tail_len = keep - head_len;
  // Head: cut back to just after the last newline inside it (if any).
  std::string_view head(text.data(), head_len);
  if (auto nl = head.rfind('\n'); nl != std::string_view::npos) head = head.substr(0, nl + 1);
  // Tail: start just after the first newline inside it (if any).
  std::string_view tail(text.data() + text.size() - tail_len, tail_len);
  if (auto nl = tail.find('\n'); nl != std::string_view::npos && nl + 1 < tail.size())
    tail = tail.substr(nl + 1);
  // Never split a UTF-8 sequence.
  while (!head.empty() && (static_cast<unsigned char>(head.back()) & 0xC0) == 0x80)
    head.remove_suffix(1);
  if (!head.empty() && (static_cast<unsigned char>(head.back()) & 0x80)) head.remove_suffix(1);
  while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80)
    tail.remove_prefix(1);
  return std::string(head) + marker + std::string(tail);
}

}  // namespace

std::string SessionMeta::source_name() const {
  if (source.text.size() >= 2 && source.text.front() == '"') {
    try {
      return json::parse_as<std::string>(source.text);
    } catch (const json::DecodeError&) {
    }
  }
  return source.text;
}

std::string_view item_type(const RolloutItem& item) {
  return std::visit([](const auto& x) { return type_of<std::decay_t<decltype(x)>>(); }, item);
}

std::string format_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  int64_t secs = ms / 1000;
  int64_t millis = ms % 1000;
  if (millis < 0) {
    millis += 1000;
    secs -= 1;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

std::string encode_line(const RolloutLine& line) {
  json::Writer w;
  w.begin_object();
  w.field("timestamp", line.timestamp);
  w.field("type", line.type());
  w.key("payload");
  std::visit([&w](const auto& x) { json::write_value(w, x); }, line.item);
  w.end_object();
  return w.take();
}

std::string encode_line(std::chrono::system_clock::time_point t, const RolloutItem& item) {
  return encode_line(RolloutLine{format_timestamp(t), item});
}

std::optional<RolloutLine> decode_line(std::string_view text) {
  try {
    json::Parser p;
    json::Element root = p.parse(text);
    if (!root.is_object()) return std::nullopt;
    json::Object o = root.get_object().value_unsafe();
    auto ts = json::get_string(o, "timestamp");
    auto type = json::get_string(o, "type");
    auto payload = json::get(o, "payload");
    if (!ts || !type || !payload) return std::nullopt;
    RolloutLine line;
    line.timestamp = std::string(*ts);
    bool ok = try_decode<SessionMeta>(*type, *payload, line.item) ||
              try_decode<ResponseItem>(*type, *payload, line.item) ||
              try_decode<EventMsg>(*type, *payload, line.item) ||
              try_decode<TurnContext>(*type, *payload, line.item) ||
              try_decode<Compacted>(*type, *payload, line.item);
    if (!ok) return std::nullopt;
    return line;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool should_persist(const EventMsg& ev) {
  // entered_review_mode, exited_review_mode and undo_completed are persisted too (§9.3); llmx
  // does not emit them yet, so they have no EventMsg alternative here.
  return ev.is<UserMessageEvent>() || ev.is<AgentMessageEvent>() || ev.is<AgentReasoningEvent>() ||
         ev.is<AgentReasoningRawContentEvent>() || ev.is<TokenCountEvent>() ||
         ev.is<TurnAbortedEvent>() || ev.is<McpToolCallEndEvent>() ||  // llmx: which server and tool, how long
         ev.is<ThreadRolledBackEvent>() || ev.is<ThreadNameUpdatedEvent>();
}

bool should_persist(const ResponseItem&) {
  // Everything except unknown (`other`) items, which ResponseItem cannot represent.
  return true;
}

bool should_persist(const RolloutItem& item) {
  if (auto* ev = std::get_if<EventMsg>(&item)) return should_persist(*ev);
  if (auto* ri = std::get_if<ResponseItem>(&item)) return should_persist(*ri);
  return true;
}

std::string rollout_path(const std::string& llmx_home, std::chrono::system_clock::time_point t,
                         const std::string& conversation_id) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  int y = tm.tm_year + 1900, mo = tm.tm_mon + 1, d = tm.tm_mday;
  return fmt::format("{}/sessions/{:04}/{:02}/{:02}/rollout-{:04}-{:02}-{:02}T{:02}-{:02}-{:02}-{}.jsonl",
                     llmx_home, y, mo, d, y, mo, d, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     conversation_id);
}

bool is_user_turn_message(const ResponseItem& item) {
  const auto* m = item.get_if<MessageItem>();
  if (!m || m->role != "user") return false;
  if (m->content.size() == 1) {
    if (const auto* t = m->content[0].get_if<InputText>()) {
      if (t->text.starts_with("# AGENTS.md instructions for ") ||
          t->text.starts_with("<user_instructions>"))
        return false;
    }
  }
  for (const auto& c : m->content) {
    if (const auto* t = c.get_if<InputText>()) {
      if (starts_with_ci(t->text, "<environment_context>") ||
          starts_with_ci(t->text, "<user_shell_command>"))
        return false;
    }
  }
  return true;
}

std::vector<ResponseItem> build_compacted_history(const std::vector<ResponseItem>& initial_context,
                                                  const std::vector<std::string>& user_messages,
                                                  const std::string& summary, size_t user_budget) {
  std::vector<std::string> selected;
  size_t remaining = user_budget;
  for (auto it = user_messages.rbegin(); it != user_messages.rend(); ++it) {
    if (it->size() <= remaining) {
      selected.push_back(*it);
      remaining -= it->size();
    } else {
      if (remaining > 0) selected.push_back(truncate_middle_budget(*it, remaining));
      break;
    }
  }
  std::reverse(selected.begin(), selected.end());
  std::vector<ResponseItem> out = initial_context;
  for (auto& s : selected) out.push_back(user_message(std::move(s)));
  out.push_back(user_message(summary.empty() ? "(no summary available)" : summary));
  return out;
}

namespace {

// A marker while loading: the history's turns, and the events from the first of the dropped
// turns on (`event_starts`: the events' length at each turn_context).
void drop_loaded_turns(LoadedRollout& r, std::vector<size_t>& event_starts, uint32_t n) {
  if (n == 0) return;  // nothing to drop (llmx never writes it, a foreign file may)
  drop_last_turns(r.history, r.turn_starts, n);
  size_t cut = r.events.size();
  if (n <= event_starts.size()) {
    cut = event_starts[event_starts.size() - n];
  } else {
    for (size_t i = 0; i < r.events.size(); ++i)
      if (r.events[i].is<UserMessageEvent>()) {
        cut = std::min(i, event_starts.empty() ? i : event_starts.front());
        break;
      }
  }
  r.events.resize(std::min(cut, r.events.size()));
  event_starts.resize(event_starts.size() - std::min<size_t>(n, event_starts.size()));
}

}  // namespace

std::vector<std::string> lines_to_fork(std::string_view contents) {
  std::vector<std::string> out;
  for_each_line(contents, [&](std::string_view line, bool terminated) {
    if (!terminated) return;  // a cut last line is not copied
    auto decoded = decode_line(line);
    if (!decoded || std::holds_alternative<SessionMeta>(decoded->item)) return;
    if (auto* ev = std::get_if<EventMsg>(&decoded->item); ev && ev->is<ThreadNameUpdatedEvent>()) return;
    out.emplace_back(line);
  });
  return out;
}

LoadedRollout load(std::string_view contents, const std::vector<ResponseItem>& initial_context, size_t user_budget) {
  LoadedRollout r;
  std::vector<size_t> event_starts;
  size_t line_no = 0;
  for_each_line(contents, [&](std::string_view line, bool terminated) {
    ++line_no;
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;

    auto decoded = decode_line(line);
    if (!decoded) {
      if (!terminated) {
        r.truncated_last_line = true;
        r.warnings.push_back(
            fmt::format("line {}: ignoring partial last line ({} bytes)", line_no, line.size()));
      } else {
        ++r.bad_lines;
        r.warnings.push_back(fmt::format("line {}: ignoring unparseable line", line_no));
      }
      return;
    }

    std::visit(
        [&](auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, SessionMeta>) {
            if (!r.meta) r.meta = std::move(x);
          } else if constexpr (std::is_same_v<T, ResponseItem>) {
            if (should_persist(x)) r.history.push_back(std::move(x));
          } else if constexpr (std::is_same_v<T, EventMsg>) {
            if (auto* back = x.template get_if<ThreadRolledBackEvent>())
              drop_loaded_turns(r, event_starts, back->num_turns);
            else if (should_persist(x))
              r.events.push_back(std::move(x));
          } else if constexpr (std::is_same_v<T, TurnContext>) {
            r.turn_starts.push_back(r.history.size());
            event_starts.push_back(r.events.size());
            r.last_turn_context = std::move(x);
          } else if constexpr (std::is_same_v<T, Compacted>) {
            ++r.compactions;
            r.turn_starts.clear();  // the turns before it are one summary now
            std::vector<std::string> users;
            for (const auto& item : r.history)
              if (is_user_turn_message(item)) users.push_back(item.get_if<MessageItem>()->text());
            r.history = build_compacted_history(initial_context, users, x.message, user_budget);
          }
        },
        decoded->item);
  });
  return r;
}

}  // namespace llmx::rollout
