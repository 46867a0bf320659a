#include "protocol/core/history.hpp"

#include <atomic>
#include <iterator>

#include "protocol/base/json_codec.hpp"

namespace llmx {

namespace {

// Whether this history is a segment's one holder: then no other history can see it, and it may
// grow or give its items away. The acquire pairs with the release of the last other holder (on
// whatever thread it let go), as in any copy-on-write.
template <class Segment>
bool alone(const std::shared_ptr<Segment>& segment) {
  if (segment.use_count() != 1) return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

}  // namespace

History::History(std::vector<ResponseItem> items) : size_(items.size()) {
  if (!items.empty()) segments_.push_back(std::make_shared<Segment>(std::move(items)));
}

const ResponseItem& History::operator[](size_t i) const {
  for (const auto& s : segments_) {
    if (i < s->size()) return (*s)[i];
    i -= s->size();
  }
  return segments_.back()->at(i);  // out of range: throws, as vector::at does
}

History::Segment& History::tail() {
  if (!segments_.empty() && alone(segments_.back())) return *segments_.back();
  if (segments_.size() + 1 > kMaxSegments) join_smallest_pair();
  segments_.push_back(std::make_shared<Segment>());
  return *segments_.back();
}

void History::join_smallest_pair() {
  // The neighbours with the fewest items between them (the later pair on a tie): the old, big
  // segments stay as they are, and the young ones pair up like the digits of a binary counter,
  // so an item is copied about log2(size) times over a history's life, not once per join.
  size_t best = segments_.size() - 2;
  for (size_t i = best; i-- > 0;)
    if (segments_[i]->size() + segments_[i + 1]->size() < segments_[best]->size() + segments_[best + 1]->size())
      best = i;
  auto joined = std::make_shared<Segment>();
  joined->reserve(segments_[best]->size() + segments_[best + 1]->size());
  for (size_t i = best; i <= best + 1; ++i) {
    auto& from = segments_[i];
    if (alone(from))
      std::move(from->begin(), from->end(), std::back_inserter(*joined));
    else
      joined->insert(joined->end(), from->begin(), from->end());
  }
  segments_[best] = std::move(joined);
  segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
}

void History::push_back(ResponseItem item) {
  tail().push_back(std::move(item));
  ++size_;
}

void History::append(std::vector<ResponseItem> items) {
  if (items.empty()) return;
  auto& t = tail();
  t.insert(t.end(), std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
  size_ += items.size();
}

void History::truncate(size_t n) {
  if (n >= size_) return;
  size_t kept = 0, whole = 0;
  while (whole < segments_.size() && kept + segments_[whole]->size() <= n) kept += segments_[whole++]->size();
  // Segments [0, whole) stay; the one that crosses n keeps its first items, as a copy if shared.
  if (kept < n) {
    const auto& cut = *segments_[whole];
    segments_[whole] = std::make_shared<Segment>(cut.begin(), cut.begin() + static_cast<std::ptrdiff_t>(n - kept));
    ++whole;
  }
  segments_.resize(whole);
  size_ = n;
}

std::vector<ResponseItem> History::to_vector() const {
  std::vector<ResponseItem> out;
  out.reserve(size_);
  for (const auto& s : segments_) out.insert(out.end(), s->begin(), s->end());
  return out;
}

void write_json(json::Writer& w, const History& x) {
  w.begin_array();
  for (const auto& item : x) json::write_value(w, item);
  w.end_array();
}

void read_json(json::Element e, History& x) {
  std::vector<ResponseItem> items;
  json::read_value(e, items);
  x = History(std::move(items));
}

}  // namespace llmx
