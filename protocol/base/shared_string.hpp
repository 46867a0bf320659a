// An immutable string whose copies share one buffer. Streamed events repeat the same thread,
// turn and item ids in every delta; as std::string each copy of a uuid is an allocation (it is
// past the small-string limit), as SharedString it is a reference count.
//
// Encoders treat it as a string (JSON, schema, CAF serialization: reflect.hpp's leaf types).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace llmx {

class SharedString {
 public:
  SharedString() = default;
  SharedString(std::string s) : text_(s.empty() ? nullptr : std::make_shared<const std::string>(std::move(s))) {}
  SharedString(const char* s) : SharedString(std::string(s)) {}

  const std::string& str() const { return text_ ? *text_ : empty_string(); }
  operator const std::string&() const { return str(); }
  size_t size() const { return str().size(); }
  bool empty() const { return !text_; }

  friend bool operator==(const SharedString& a, const SharedString& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator==(const SharedString& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedString& a, const char* b) { return a.str() == b; }

 private:
  static const std::string& empty_string() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const std::string> text_;  // null when empty: a default value allocates nothing
};

}  // namespace llmx
