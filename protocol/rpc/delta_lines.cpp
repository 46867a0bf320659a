#include "protocol/rpc/delta_lines.hpp"

#include <type_traits>

#include "protocol/base/json_writer.hpp"

namespace llmx::rpc {

namespace {

template <class T>
constexpr bool kWithIds = std::is_same_v<T, AgentMessageContentDeltaEvent> ||
                          std::is_same_v<T, ReasoningContentDeltaEvent> ||
                          std::is_same_v<T, ReasoningRawContentDeltaEvent>;
template <class T>
constexpr bool kDelta = kWithIds<T> || std::is_same_v<T, AgentMessageDeltaEvent> ||
                        std::is_same_v<T, AgentReasoningDeltaEvent> ||
                        std::is_same_v<T, AgentReasoningRawContentDeltaEvent>;

// The thread, turn and item ids of a content delta (null for the other kinds).
struct Ids {
  const SharedString* thread = nullptr;
  const SharedString* turn = nullptr;
  const SharedString* item = nullptr;
};

Ids ids_of(const Event& ev) {
  return std::visit(
      [](const auto& m) -> Ids {
        if constexpr (kWithIds<std::decay_t<decltype(m)>>)
          return {&m.thread_id, &m.turn_id, &m.item_id};
        else
          return {};
      },
      ev.msg.value);
}

bool same(const SharedString& kept, const SharedString* id) { return id ? kept == *id : kept.empty(); }

}  // namespace

std::optional<std::string_view> DeltaLines::delta_of(const Event& ev) {
  return std::visit(
      [](const auto& m) -> std::optional<std::string_view> {
        if constexpr (kDelta<std::decay_t<decltype(m)>>)
          return std::string_view(m.delta);
        else
          return std::nullopt;
      },
      ev.msg.value);
}

DeltaLines::Kept* DeltaLines::recent(std::string_view scope, size_t kind) const {
  for (Kept* kept : recent_)
    if (kept && SlotEq::same(SlotEq::view(kept->first), SlotView{scope, kind})) return kept;
  return nullptr;
}

void DeltaLines::remember(Kept* kept) {
  recent_[next_recent_] = kept;
  next_recent_ = (next_recent_ + 1) % recent_.size();
}

const DeltaLines::Entry* DeltaLines::find(std::string_view scope, const Event& ev) {
  const size_t kind = ev.msg.value.index();
  Kept* kept = recent(scope, kind);
  if (!kept) {
    auto it = entries_.find(SlotView{scope, kind});
    if (it == entries_.end()) return nullptr;
    kept = &*it;
    remember(kept);
  }
  const Entry& e = kept->second;
  const Ids ids = ids_of(ev);
  if (e.event_id == ev.id && same(e.item_id, ids.item) && same(e.turn_id, ids.turn) && same(e.thread_id, ids.thread))
    return &e;
  return nullptr;
}

const DeltaLines::Entry& DeltaLines::keep(std::string_view scope, const Event& ev, std::string_view empty,
                                          std::string_view one) {
  const size_t kind = ev.msg.value.index();
  auto it = entries_.find(SlotView{scope, kind});
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxEntries) {
      entries_.clear();
      recent_.fill(nullptr);
    }
    it = entries_.try_emplace(Slot{std::string(scope), kind}).first;
    remember(&*it);
  }
  Entry& e = it->second;
  const Ids ids = ids_of(ev);
  e.event_id = ev.id;
  e.thread_id = ids.thread ? *ids.thread : SharedString();
  e.turn_id = ids.turn ? *ids.turn : SharedString();
  e.item_id = ids.item ? *ids.item : SharedString();
  // `empty` is P "" S and `one` is P "x" S when the writer puts the delta in once, as a string:
  // they part where `one` has the x, and the rest must be the same. Anything else (the delta
  // written twice, or changing more of the line) leaves the entry unused: every line is whole.
  size_t at = 0;
  while (at < empty.size() && at < one.size() && empty[at] == one[at]) ++at;
  e.usable = one.size() == empty.size() + 1 && at >= 1 && one.substr(at - 1, 3) == R"("x")" &&
             empty.substr(at) == one.substr(at + 1);
  e.prefix.assign(e.usable ? empty.substr(0, at - 1) : std::string_view());
  e.suffix.assign(e.usable ? empty.substr(at + 1) : std::string_view());
  return e;
}

Event DeltaLines::with_delta(const Event& ev, std::string_view delta) {
  Event out = ev;
  std::visit(
      [&](auto& m) {
        if constexpr (kDelta<std::decay_t<decltype(m)>>) m.delta = delta;
      },
      out.msg.value);
  return out;
}

void DeltaLines::emit(std::string& out, const Entry& e, std::string_view delta) {
  out.append(e.prefix);
  json::append_escaped(out, delta);
  out.append(e.suffix);
}

}  // namespace llmx::rpc
