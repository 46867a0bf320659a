// The notification lines of streamed deltas, written from kept prefixes. A turn streams thousands
// of deltas whose lines differ only in the text: the rest (the request and event ids, the thread,
// turn and item ids) is written once by the ordinary writer and kept, and each further delta of
// the same item copies it and escapes only its text. Encoding was half of a session's work per
// delta (issue 18, point 4); the lines are byte for byte what the ordinary writer makes.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "protocol/core/event_msgs.hpp"

namespace llmx::rpc {

class DeltaLines {
 public:
  DeltaLines() = default;
  // Not copied or moved: the entries used last are addresses inside this object's map.
  DeltaLines(const DeltaLines&) = delete;
  DeltaLines& operator=(const DeltaLines&) = delete;

  // Appends the line of `ev` to `out`. `write(out, ev)` appends a line the ordinary way: it is
  // called for every event that is not a delta, and twice per item and kind of delta to find
  // where the delta's value sits in its line. `scope` is whatever else `write` puts in the line
  // (a tools/call's request id), so a prefix is only reused where `write` would make the same.
  template <class Write>
  void append(std::string& out, std::string_view scope, const Event& ev, Write&& write) {
    const auto delta = delta_of(ev);
    if (!delta) return write(out, ev);
    const Entry* kept = find(scope, ev);
    if (!kept) {
      std::string empty, one;  // the line with an empty delta and with "x": they differ at its value
      write(empty, with_delta(ev, ""));
      write(one, with_delta(ev, "x"));
      kept = &keep(scope, ev, empty, one);
    }
    if (!kept->usable) return write(out, ev);
    emit(out, *kept, *delta);
  }

  // The text of a streamed delta, or nullopt for any other event.
  static std::optional<std::string_view> delta_of(const Event& ev);

 private:
  // What one call (or conversation) streams of one kind of delta: a turn's item at a time.
  struct Entry {
    std::string event_id;
    SharedString thread_id, turn_id, item_id;  // empty for the deltas without them
    std::string prefix;                        // the line up to the delta's value
    std::string suffix;                        // and after it
    bool usable = false;  // the delta's value is the only part of the line that varies
  };
  struct Slot {
    std::string scope;
    size_t kind;  // the EventMsg alternative
  };
  struct SlotView {
    std::string_view scope;
    size_t kind;
  };
  struct SlotHash {
    using is_transparent = void;
    size_t operator()(SlotView s) const { return std::hash<std::string_view>{}(s.scope) * 31 + s.kind; }
    size_t operator()(const Slot& s) const { return (*this)(SlotView{s.scope, s.kind}); }
  };
  struct SlotEq {
    using is_transparent = void;
    static SlotView view(const Slot& s) { return {s.scope, s.kind}; }
    static SlotView view(SlotView s) { return s; }
    // The scopes compared inline: string_view's == compiled to a call per comparison, most of
    // what looking at the recent entries cost (callgrind).
    static bool same(SlotView a, SlotView b) {
      return a.kind == b.kind && a.scope.size() == b.scope.size() &&
             (a.scope.empty() || std::memcmp(a.scope.data(), b.scope.data(), a.scope.size()) == 0);
    }
    bool operator()(const auto& a, const auto& b) const { return same(view(a), view(b)); }
  };
  // Every call streaming at once has its entries (a hundred streams interleave their deltas in
  // one batch); past this many, the kept ones are dropped and made again as deltas come.
  static constexpr size_t kMaxEntries = 1024;
  using Kept = std::pair<const Slot, Entry>;

  const Entry* find(std::string_view scope, const Event& ev);
  Kept* recent(std::string_view scope, size_t kind) const;
  void remember(Kept* kept);
  const Entry& keep(std::string_view scope, const Event& ev, std::string_view empty, std::string_view one);
  static Event with_delta(const Event& ev, std::string_view delta);
  static void emit(std::string& out, const Entry& e, std::string_view delta);

  std::unordered_map<Slot, Entry, SlotHash, SlotEq> entries_;
  // The entries used last, looked at before the map: a stream's deltas come in runs of a batch,
  // each of one to three kinds (one per notification), and hashing the scope twice a delta cost
  // more than escaping its text (callgrind). Nodes of the map keep their address.
  std::array<Kept*, 4> recent_{};
  size_t next_recent_ = 0;
};

}  // namespace llmx::rpc
