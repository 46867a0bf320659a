// A conversation's items, oldest first, shared by the copies that send them. The conversation,
// its running task and each model request hold the same history; as a vector each held a copy of
// every item, living as long as a turn or a stream between the conversations' long-lived items.
// Sharing them took 14% off a long soak's RSS and a third off its creep (README, issue 18).
//
// The items sit in segments that copies share and never change while shared. Appending writes to
// the last segment when this history alone holds it, and opens a new segment otherwise; past
// kMaxSegments the two neighbours with the fewest items are joined (joining all into one copied
// the whole history every 16 shared appends). Copies may live on other threads: a segment is
// only written by the one history that holds it.
//
// JSON and CAF serialization treat it as an array of items.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/core/items.hpp"

namespace llmx {

class History {
  using Segment = std::vector<ResponseItem>;

 public:
  static constexpr size_t kMaxSegments = 16;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = ResponseItem;
    using difference_type = std::ptrdiff_t;
    using pointer = const ResponseItem*;
    using reference = const ResponseItem&;

    const_iterator() = default;
    reference operator*() const { return (*(*segments_)[segment_])[item_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++item_ == (*segments_)[segment_]->size()) {
        ++segment_;
        item_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      auto before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.segment_ == b.segment_ && a.item_ == b.item_;
    }

   private:
    friend class History;
    const_iterator(const std::vector<std::shared_ptr<Segment>>* segments, size_t segment)
        : segments_(segments), segment_(segment) {}
    const std::vector<std::shared_ptr<Segment>>* segments_ = nullptr;
    size_t segment_ = 0;
    size_t item_ = 0;
  };
  using iterator = const_iterator;
  using value_type = ResponseItem;
  using size_type = size_t;

  History() = default;
  History(std::vector<ResponseItem> items);
  History(std::initializer_list<ResponseItem> items) : History(std::vector<ResponseItem>(items)) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const ResponseItem& operator[](size_t i) const;
  const ResponseItem& front() const { return segments_.front()->front(); }
  const ResponseItem& back() const { return segments_.back()->back(); }
  const_iterator begin() const { return {&segments_, 0}; }
  const_iterator end() const { return {&segments_, segments_.size()}; }

  void push_back(ResponseItem item);
  void append(std::vector<ResponseItem> items);
  // Keeps the first n items.
  void truncate(size_t n);
  // The items as one vector of copies (for code that edits them, such as compaction's trimming).
  std::vector<ResponseItem> to_vector() const;
  // How many segments hold the items (tests; the joining rule above).
  size_t segments() const { return segments_.size(); }


 private:
  // A last segment this history alone holds, to append to.
  Segment& tail();
  // Makes room for one more segment (see the top).
  void join_smallest_pair();

  std::vector<std::shared_ptr<Segment>> segments_;  // none of them empty
  size_t size_ = 0;
};

// --- encoders: an array of items ------------------------------------------------------------------

void write_json(json::Writer& w, const History& x);
void read_json(json::Element e, History& x);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, History& x) {
  std::vector<ResponseItem> items;
  if constexpr (!Inspector::writes_state) items = x.to_vector();
  auto err = caf_bridge::value(f, items);
  if constexpr (Inspector::writes_state)
    if (!err) x = History(std::move(items));
  if constexpr (!caf_bridge::is_void_inspector<Inspector>) return err;
}

}  // namespace llmx
