#include "tools/mock-llm/state.hpp"

#include "tools/mock-llm/text_util.hpp"

namespace mockllm {

bool ServerState::open_record_file(const std::string &path) {
  std::lock_guard lock(mu_);
  record_file_ = std::fopen(path.c_str(), "a");
  return record_file_ != nullptr;
}

void ServerState::record(std::string body_json, std::string authorization,
                         std::string user_agent) {
  std::lock_guard lock(mu_);
  if (record_file_) {
    // One line per request, flushed at once so a test can read it while the server runs.
    std::fwrite(body_json.data(), 1, body_json.size(), record_file_);
    std::fputc('\n', record_file_);
    std::fflush(record_file_);
  }
  recorded_.push_back({std::move(body_json), std::move(authorization), std::move(user_agent)});
  while (recorded_.size() > kMaxRecorded) recorded_.pop_front();
}

std::string ServerState::requests_json() const {
  std::lock_guard lock(mu_);
  std::string out = R"({"requests":[)";
  bool first = true;
  for (const auto &r : recorded_) {
    if (!first) out += ',';
    first = false;
    out += r.body;
  }
  return out + "]}";
}

std::string ServerState::headers_json() const {
  std::lock_guard lock(mu_);
  std::string out = R"({"headers":[)";
  bool first = true;
  for (const auto &r : recorded_) {
    if (!first) out += ',';
    first = false;
    out += R"({"authorization":)";
    append_json_string(out, r.authorization);
    out += R"(,"user-agent":)";
    append_json_string(out, r.user_agent);
    out += '}';
  }
  return out + "]}";
}

void ServerState::count_request(const std::string &peer) {
  std::lock_guard lock(mu_);
  ++requests_;
  peers_.insert(peer);
}

std::string ServerState::stats_json() const {
  std::lock_guard lock(mu_);
  std::string counts;
  for (const auto &[what, n] : counts_) {
    if (!counts.empty()) counts += ',';
    append_json_string(counts, what);
    counts += ':' + std::to_string(n);
  }
  return R"({"requests":)" + std::to_string(requests_) + R"(,"connections":)" +
         std::to_string(peers_.size()) + R"(,"counts":{)" + counts + "}}";
}

void ServerState::count(const std::string &what) {
  std::lock_guard lock(mu_);
  ++counts_[what];
}

long long ServerState::bump(const std::string &directive) {
  std::lock_guard lock(mu_);
  return times_[directive]++;
}

void ServerState::reset() {
  std::lock_guard lock(mu_);
  recorded_.clear();
  times_.clear();
  requests_ = 0;
  counts_.clear();
  peers_.clear();
}

void ServerState::flush() {
  std::lock_guard lock(mu_);
  if (record_file_) std::fflush(record_file_);
}

} // namespace mockllm
