// Who asks for something that holds while anyone asks (a paused model stream: every subscriber
// whose client is behind). Few voters: a small vector.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

namespace llmx {

template <class Voter>
class Votes {
 public:
  // `who` asks (true) or stops asking (false); the new outcome when it changed, else nothing.
  std::optional<bool> set(const Voter& who, bool asks) {
    const bool before = any();
    auto it = std::find(voters_.begin(), voters_.end(), who);
    if (asks && it == voters_.end()) voters_.push_back(who);
    if (!asks && it != voters_.end()) voters_.erase(it);
    if (any() == before) return std::nullopt;
    return any();
  }
  bool any() const { return !voters_.empty(); }

 private:
  std::vector<Voter> voters_;
};

}  // namespace llmx
