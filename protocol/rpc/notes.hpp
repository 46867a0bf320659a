// What one event becomes on a wire: notifications whose params (JSON text) are kept in one
// buffer. A session keeps one per wire and clears it for each event, so once the buffer has grown
// a streamed delta costs no allocation (the v2 and ACP translators write into it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmx::rpc {

class Notes {
 public:
  struct Note {
    std::string_view method;
    std::string_view params;
  };
  // Starts a notification (`method` is a literal: it is kept as a view); its params are what is
  // appended to the returned buffer before the next add().
  std::string& add(std::string_view method) {
    marks_.push_back({method, text_.size()});
    return text_;
  }
  size_t size() const { return marks_.size(); }
  bool empty() const { return marks_.empty(); }
  Note operator[](size_t i) const {
    const size_t end = i + 1 < marks_.size() ? marks_[i + 1].begin : text_.size();
    return {marks_[i].method, std::string_view(text_).substr(marks_[i].begin, end - marks_[i].begin)};
  }
  // Keeps the buffer for the next event, unless one large event (a command's whole output)
  // grew it past what streamed events need: a long-lived session does not hold on to that.
  void clear() {
    if (text_.capacity() > kKeptBytes)
      std::string().swap(text_);
    else
      text_.clear();
    marks_.clear();
  }

  // What the buffer holds on to between events.
  size_t capacity() const { return text_.capacity(); }

  static constexpr size_t kKeptBytes = 64 * 1024;

 private:
  struct Mark {
    std::string_view method;
    size_t begin;
  };
  std::string text_;
  std::vector<Mark> marks_;
};

}  // namespace llmx::rpc
