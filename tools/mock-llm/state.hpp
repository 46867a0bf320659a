// Server-wide mutable state shared by the request threads: the recorded requests (for tests to
// inspect what the engine sent), the per-directive `times=N` counters and the request and
// connection counts of /_mock/stats.
#pragma once

#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace mockllm {

class ServerState {
public:
  static constexpr size_t kMaxRecorded = 1000;

  // Opens the --record file for appending; false if it cannot be opened.
  bool open_record_file(const std::string &path);

  // `body_json` must be one valid compact JSON value (it is embedded verbatim).
  void record(std::string body_json, std::string authorization, std::string user_agent);

  std::string requests_json() const; // {"requests":[...]}
  std::string headers_json() const;  // {"headers":[{"authorization":..,"user-agent":..}]}

  // Counts one model request (chat or responses) arriving on connection `peer`
  // ("addr:port"); /_mock/stats reports both counts.
  void count_request(const std::string &peer);
  std::string stats_json() const; // {"requests":R,"connections":C,"counts":{...}}
  // Counts one event of another kind (a /v1/models or /model/info GET, a refused wire...).
  void count(const std::string &what);

  // Returns how many earlier requests carried this directive, then counts this one.
  long long bump(const std::string &directive);

  void reset();
  void flush();

private:
  struct Recorded {
    std::string body, authorization, user_agent;
  };
  mutable std::mutex mu_;
  std::deque<Recorded> recorded_;
  std::map<std::string, long long> times_;
  long long requests_ = 0;
  std::map<std::string, long long> counts_;
  std::set<std::string> peers_; // a client's source port identifies its connection
  std::FILE *record_file_ = nullptr;
};

} // namespace mockllm
