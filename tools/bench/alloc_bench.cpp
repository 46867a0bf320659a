#include "alloc_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "process.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;

// One server under the counter, spoken to one request (or turn) at a time.
class Counted {
 public:
  Counted(const AllocBenchEnv& env, std::vector<std::string> argv, const std::string& count_file)
      : count_file_(count_file),
        child_(std::move(argv), {{"LLMX_HOME", env.home},
                                 {"LLMX_BASE_URL", env.url},
                                 {"LLMX_API_KEY", "bench"},
                                 {"LD_PRELOAD", env.counter},
                                 {"LLMX_ALLOC_COUNT_FILE", count_file}}) {}
  ~Counted() {
    child_.close_stdin();
    child_.wait(seconds(5));
    std::filesystem::remove(count_file_);
  }
  // Sends a line and reads until one contains `until`; false on timeout.
  bool exchange(const std::string& line, const std::string& until) {
    child_.write_line(line);
    while (auto got = child_.read_line(seconds(60)))
      if (got->find(until) != std::string::npos) {
        last_ = *got;
        return true;
      }
    return false;
  }
  const std::string& last() const { return last_; }
  // The server's allocations so far, once it has been quiet for a moment (the counter writes
  // every 10 ms).
  std::optional<unsigned long> allocations() {
    std::this_thread::sleep_for(milliseconds(60));
    std::ifstream f(count_file_);
    unsigned long n = 0;
    if (f >> n) return n;
    return std::nullopt;
  }

 private:
  std::string count_file_;
  Child child_;
  std::string last_;
};

std::string field_of(const std::string& line, const std::string& key) {
  auto at = line.find("\"" + key + "\":\"");
  if (at == std::string::npos) return "";
  at += key.size() + 4;
  return line.substr(at, line.find('"', at) - at);
}

// A wire: how to start it, open a conversation, and run one turn of `deltas` deltas.
struct Wire {
  std::string name;
  std::vector<std::string> args;
  std::function<bool(Counted&)> open;
  std::function<bool(Counted&, int deltas, int n)> turn;
};

std::vector<Wire> wires(const AllocBenchEnv& env) {
  auto id = std::make_shared<std::string>();  // the conversation a wire opened
  auto prompt = [](int deltas) { return fmt::format("count @mock:long deltas={}", deltas); };
  return {
      {"MCP server (`llmx` tool call, 2 notifications a delta)",
       {env.llmx, "mcp-server"},
       [](Counted& c) {
         return c.exchange(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
                           R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})",
                           R"("id":0)");
       },
       [prompt](Counted& c, int deltas, int n) {
         return c.exchange(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"llmx",)"
                                       R"("arguments":{{"prompt":"{}"}}}}}})",
                                       n, prompt(deltas)),
                           fmt::format(R"("id":{},"result")", n));
       }},
      {"app server (v2 turn, with the v1 event stream: 3 notifications a delta)",
       {env.llmx, "app-server"},
       [id](Counted& c) {
         if (!c.exchange(R"({"id":0,"method":"initialize","params":{"clientInfo":{"name":"bench","version":"1"}}})",
                         R"("id":0)"))
           return false;
         if (!c.exchange(R"({"id":1,"method":"thread/start","params":{}})", R"("id":1)")) return false;
         *id = field_of(c.last(), "id");
         return !id->empty();
       },
       [id, prompt](Counted& c, int deltas, int n) {
         return c.exchange(fmt::format(R"({{"id":{},"method":"turn/start","params":{{"threadId":"{}","input":)"
                                       R"([{{"type":"text","text":"{}"}}]}}}})",
                                       n, *id, prompt(deltas)),
                           R"("method":"turn/completed")");
       }},
      {"ACP (session/prompt, 1 session/update a delta)",
       {env.llmx, "acp"},
       [id, home = env.home](Counted& c) {
         if (!c.exchange(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})",
                         R"("id":0)"))
           return false;
         if (!c.exchange(fmt::format(R"({{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}})",
                                     home),
                         R"("id":1)"))
           return false;
         *id = field_of(c.last(), "sessionId");
         return !id->empty();
       },
       [id, prompt](Counted& c, int deltas, int n) {
         return c.exchange(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"session/prompt","params":{{"sessionId":"{}",)"
                                       R"("prompt":[{{"type":"text","text":"{}"}}]}}}})",
                                       n, *id, prompt(deltas)),
                           fmt::format(R"("id":{},"result")", n));
       }},
  };
}

}  // namespace

void alloc_rows(const AllocBenchEnv& env, const std::function<void(std::string)>& row) {
  if (!std::filesystem::exists(env.counter)) {
    row(fmt::format("| allocations per streamed delta | not measured: no counter library at {} |", env.counter));
    return;
  }
  const int long_turn = 2000, short_turn = 200, pairs = 3;
  for (auto& wire : wires(env)) {
    auto file = (std::filesystem::path(env.home) / fmt::format("alloc-count-{}", getpid())).string();
    Counted c(env, wire.args, file);
    int n = 10;
    bool ok = wire.open(c) && wire.turn(c, long_turn, n++);  // the first turn grows what is kept
    double sum = 0;
    for (int i = 0; ok && i < pairs; ++i) {
      auto a0 = c.allocations();
      ok = wire.turn(c, long_turn, n++);
      auto a1 = c.allocations();
      ok = ok && wire.turn(c, short_turn, n++);
      auto a2 = c.allocations();
      ok = ok && a0 && a1 && a2;
      if (ok) sum += (static_cast<double>(*a1 - *a0) - static_cast<double>(*a2 - *a1)) / (long_turn - short_turn);
    }
    if (ok)
      row(fmt::format("| allocations per streamed delta, {} ({} against {} deltas a turn, mean of {}) | {:.2f} |", wire.name,
                      long_turn, short_turn, pairs, sum / pairs));
    else
      row(fmt::format("| allocations per streamed delta, {} | failed |", wire.name));
  }
}

}  // namespace llmx::bench
