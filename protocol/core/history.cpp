#include "protocol/core/history.hpp"

#include <atomic>
#include <iterator>

#include "protocol/base/json_codec.hpp"

namespace llmx {

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
  // One holder: no other history can see the segment, so it may grow. The acquire pairs with the
  // release of the last other holder (on whatever thread it let go), as in any copy-on-write.
  if (!segments_.empty() && segments_.back().use_count() == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);
    return *segments_.back();
  }
  if (segments_.size() + 1 > kMaxSegments) {
    auto joined = std::make_shared<Segment>(to_vector());
    segments_.clear();
    segments_.push_back(std::move(joined));
    return *segments_.back();
  }
  segments_.push_back(std::make_shared<Segment>());
  return *segments_.back();
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
