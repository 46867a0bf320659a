#include "threads_bench.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "mcp_server_driver.hpp"
#include "process.hpp"
#include "protocol/base/ids.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/store/rollout.hpp"
#include "protocol/store/thread_store.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

// An `llmx mcp-server` on `home` (the shared driver), spoken to with one request at a time.
class Client {
 public:
  Client(const ThreadsBenchEnv& env, const std::string& home) : server_({env.llmx, env.url, home, {}}) {
    call("initialize", R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}})");
  }
  ~Client() {
    server_.child().close_stdin();
    server_.child().wait(seconds(10));
  }
  // Sends a request and returns its response line (empty on timeout); notifications are skipped.
  std::string call(const std::string& method, const std::string& params) {
    return server_.request(method, params, seconds(120));
  }
  // Milliseconds from request to response.
  double timed(const std::string& method, const std::string& params, std::string* response = nullptr) {
    auto t0 = steady_clock::now();
    auto r = call(method, params);
    auto ms = ms_between(t0, steady_clock::now());
    if (response) *response = std::move(r);
    return ms;
  }

 private:
  McpServer server_;
};

// `n` threads spread over days like a busy user's (about 100 a day), newest now.
void generate(const std::string& home, int n) {
  auto now = system_clock::now();
  for (int i = 0; i < n; ++i) {
    auto t = now - minutes(14) * i;  // ~100 a day
    threads::write_synthetic_rollout(home, t, new_uuid_v7(), fmt::format("synthetic thread {}", i), "litellm", "cli");
  }
}

}  // namespace

void threads_rows(const ThreadsBenchEnv& env, const std::function<void(std::string)>& row) {
  for (int n : env.sizes) {
    auto home = fmt::format("{}/threads-{}", env.home, n);
    fs::create_directories(home);
    auto g0 = steady_clock::now();
    generate(home, n);
    double gen_ms = ms_between(g0, steady_clock::now());
    const std::string page = R"({"pageSize":25})";
    double rebuild = 0, cold = 0;
    std::vector<double> warm;
    std::string resp;
    {
      Client c(env, home);  // first listing ever: every day's index is built from the files
      rebuild = c.timed("listConversations", page, &resp);
    }
    bool ok = resp.find(R"("items":[{)") != std::string::npos;
    {
      Client c(env, home);  // a new process: indexes on disk, nothing cached in memory
      cold = c.timed("listConversations", page);
      for (int i = 0; i < 30; ++i) warm.push_back(c.timed("listConversations", page));
    }
    row(fmt::format("| listConversations first page (25) with {} stored threads: new process / warm (median of 30) "
                    "| {:.2f} ms / {:.2f} ms (first listing ever, building the index: {:.0f} ms; generating: {:.0f} "
                    "ms){} |",
                    n, cold, median(warm), rebuild, gen_ms, ok ? "" : " — FAILED"));
    fs::remove_all(home);
  }

  // Resume of a 10,000-item conversation: request → response, fresh process each time.
  auto home = env.home + "/resume";
  auto id = new_uuid_v7();
  auto t = system_clock::now();
  auto path = rollout::rollout_path(home, t, id);
  fs::create_directories(fs::path(path).parent_path());
  {
    std::ofstream out(path);
    rollout::SessionMeta meta;
    meta.id = id;
    meta.timestamp = rollout::format_timestamp(t);
    meta.cwd = home;
    meta.source = JsonOf<SessionSource>{"\"cli\""};
    meta.model_provider = "litellm";
    out << rollout::encode_line(t, meta) << '\n';
    for (int i = 0; i < 10000; ++i) {
      MessageItem m;
      m.role = i % 2 ? "assistant" : "user";
      auto text = fmt::format("item {} of a long conversation: {}", i, std::string(120, 'x'));
      if (i % 2) m.content.push_back(ContentItem{OutputText{text}});
      else m.content.push_back(ContentItem{InputText{text}});
      out << rollout::encode_line(t, ResponseItem{std::move(m)}) << '\n';
      if (i % 2 == 0) out << rollout::encode_line(t, EventMsg{UserMessageEvent{text, {}}}) << '\n';
    }
  }
  std::vector<double> samples;
  size_t bytes = fs::file_size(path);
  bool ok = true;
  for (int i = 0; i < 5; ++i) {
    Client c(env, home);
    std::string resp;
    samples.push_back(c.timed("resumeConversation", fmt::format(R"({{"conversationId":"{}"}})", id), &resp));
    ok = ok && resp.find(R"("result")") != std::string::npos;
  }
  row(fmt::format("| resumeConversation of a 10,000-item conversation ({:.1f} MB rollout), request → response "
                  "(median of 5) | {:.2f} ms{} |",
                  bytes / 1e6, median(samples), ok ? "" : " — FAILED"));
  fs::remove_all(home);
}

}  // namespace llmx::bench
