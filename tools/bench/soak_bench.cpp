#include "soak_bench.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <unistd.h>

#include <fmt/format.h>

#include "actors/compaction.hpp"
#include "bench_stats.hpp"
#include "process.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/store/rollout.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

struct Sample {
  double at_s;
  long rss_kib;
  size_t fds;
};

long rss_kib(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

size_t open_files(pid_t pid) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = fs::directory_iterator(fmt::format("/proc/{}/fd", pid), ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

// The prompt of call number `n`: each kind of work in turn (`n=` makes a fault's `times=` count
// for this call alone: the mock counts by the directive's text).
std::string prompt_of(uint64_t n) {
  switch (n % 7) {
    case 0: return fmt::format("@mock:task file=n{}.md", n);                             // a command, then a patch
    case 1: return "@mock:long deltas=300";                                               // a streamed answer
    case 2: return fmt::format("@mock:cut times=1 n={}", n);                              // a stream cut, retried
    case 3: return fmt::format("@mock:status code=429 times=1 retry_after_ms=50 n={}", n);  // rate limited once
    case 4: return fmt::format("@mock:status code=503 times=1 n={}", n);                  // a 5xx once
    case 5: return "@mock:hang";                                                          // interrupted after 1 s
    default: return R"(@mock:tool name=mcp__fake__echo args={\"message\":\"soak\"})";  // an MCP tool
  }
}

constexpr int kCompactTokens = 8000;

}  // namespace

void soak_rows(const SoakBenchEnv& env, const std::function<void(std::string)>& row) {
  auto home = fs::path(env.home) / "soak";
  auto ws = home / "ws";
  fs::create_directories(ws);
  std::ofstream(home / "config.toml") << fmt::format("[mcp_servers.fake]\ncommand = \"{}\"\nargs = [\"{}\", \"ok\", \"soak\"]\n",
                                                     env.node, env.fake_server);
  Child llmx({env.llmx, "mcp-server", "-c", "model_providers.litellm.request_max_retries=2", "-c",
              "model_providers.litellm.stream_max_retries=2", "-c", "model_providers.litellm.stream_idle_timeout_ms=5000",
              // A long-lived server compacts its conversations: without it, the live state (1,000
              // histories growing all hour) is what the RSS would show, not a leak.
              "-c", fmt::format("model_auto_compact_token_limit={}", kCompactTokens)},
             {{"LLMX_HOME", home.string()}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
  llmx.write_line(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}})");
  if (!llmx.read_line(seconds(10))) return row("| soak | llmx did not start |");
  llmx.write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  const auto t0 = steady_clock::now();
  const auto end = t0 + duration_cast<steady_clock::duration>(duration<double>(env.minutes * 60));
  std::mt19937_64 rng(18);
  std::vector<std::string> threads;          // conversation ids, as the results name them
  struct OpenCall {
    steady_clock::time_point cancel_at;  // a hang's cancel; never for the others
    std::string conversation;            // a reply's conversation; empty for a new one
  };
  std::map<uint64_t, OpenCall> open;  // by request id
  uint64_t next = 1, ok = 0, failed = 0, cancelled = 0;
  std::vector<Sample> samples;
  auto last_sample = t0 - seconds(60);
  json::Parser parser;
  auto call = [&](uint64_t id) {
    const bool fresh = threads.size() < static_cast<size_t>(env.conversations) || threads.empty();
    const std::string prompt = prompt_of(id);
    std::string args = R"("prompt":")" + prompt + R"(","approval-policy":"never","sandbox":"workspace-write","cwd":")" +
                       ws.string() + R"(")";
    OpenCall& opened = open[id];
    opened.cancel_at = prompt.starts_with("@mock:hang") ? steady_clock::now() + seconds(1) : steady_clock::time_point::max();
    if (fresh) {
      llmx.write_line(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"llmx","arguments":{{{}}}}}}})", id, args));
    } else {
      const auto& thread = threads[rng() % threads.size()];
      opened.conversation = thread;
      llmx.write_line(fmt::format(
          R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"llmx-reply","arguments":{{"conversationId":"{}","prompt":"{}"}}}}}})",
          id, thread, prompt));
    }
  };
  while (steady_clock::now() < end || !open.empty()) {
    const auto now = steady_clock::now();
    if (now - last_sample >= seconds(10)) {
      samples.push_back({ms_between(t0, now) / 1000.0, rss_kib(llmx.pid()), open_files(llmx.pid())});
      last_sample = now;
    }
    while (now < end && open.size() < static_cast<size_t>(env.in_flight)) call(next++);
    // A cancelled call gets no reply (DECISIONS P6): it is done when the cancel goes out.
    for (auto it = open.begin(); it != open.end();)
      if (it->second.cancel_at <= now) {
        llmx.write_line(fmt::format(R"({{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"soak"}}}})", it->first));
        ++cancelled;
        it = open.erase(it);
      } else {
        ++it;
      }
    auto line = llmx.read_line(milliseconds(200));
    if (!line) {
      if (steady_clock::now() > end + minutes(2)) break;  // what is still open will not finish
      continue;
    }
    try {
      auto o = parser.parse(*line).get_object().value_unsafe();
      if (json::get(o, "method")) continue;
      auto id = json::get_int(o, "id");
      if (!id) continue;
      auto it = open.find(static_cast<uint64_t>(*id));
      if (it == open.end()) continue;
      open.erase(it);
      auto text = json::to_text(*json::get(o, "result"));
      if (text.find(R"("isError":true)") == std::string::npos) ++ok; else ++failed;
      if (auto tid = text.find(R"("threadId":")"); tid != std::string::npos && threads.size() < static_cast<size_t>(env.conversations)) {
        auto start = tid + 12;
        auto id_text = text.substr(start, text.find('"', start) - start);
        if (std::find(threads.begin(), threads.end(), id_text) == threads.end()) threads.push_back(id_text);
      }
    } catch (const std::exception& e) {
      // A reply the soak cannot read would count as unanswered: say so, to tell the two apart.
      fmt::print(stderr, "soak: unreadable line ({}): {}\n", e.what(), line->substr(0, 300));
    }
  }
  // Calls never answered (there should be none): their kinds and conversations, to find what
  // lost them.
  std::string unanswered;
  for (const auto& [id, call] : open)
    unanswered += fmt::format("{}{} ({}; conversation {})", unanswered.empty() ? "" : ", ", id, prompt_of(id),
                              call.conversation.empty() ? "new" : call.conversation);
  if (!unanswered.empty()) fmt::print(stderr, "soak: unanswered calls: {}\n", unanswered);
  const double cpu = llmx.cpu_seconds();
  llmx.close_stdin();
  const int code = llmx.wait(seconds(120));
  const double secs = ms_between(t0, steady_clock::now()) / 1000.0;

  // Every rollout must load (no bad lines), whatever its conversation went through.
  // Compactions show that the histories stay bounded: without them the RSS is the histories.
  size_t files = 0, unreadable = 0, compactions = 0, longest_history = 0;
  // Replayed with the budget for kept user messages the server used under its auto-compaction
  // limit, so the length is what the server held, not what the loader's 80 KB default would keep.
  Config cfg;
  cfg.model_auto_compact_token_limit = kCompactTokens;
  const size_t user_budget = compaction::user_message_budget(cfg, models::spec_of({}, cfg.model, WireApi::chat));
  for (const auto& e : fs::recursive_directory_iterator(home / "sessions")) {
    // Rollouts only: the listing's `.index.jsonl` beside them is not one.
    if (!e.is_regular_file() || !e.path().filename().string().starts_with("rollout-")) continue;
    ++files;
    std::ifstream in(e.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto loaded = rollout::load(text, {}, user_budget);
    if (!loaded.meta || loaded.bad_lines > 0 || loaded.truncated_last_line) ++unreadable;
    compactions += loaded.compactions;
    longest_history = std::max(longest_history, loaded.history.size());
  }
  // The rollouts and the workspace say what became of an unanswered call: kept, not removed
  // with the bench's scratch folder.
  if (!open.empty()) {
    auto kept = fs::temp_directory_path() / fmt::format("llmx-soak-unanswered-{}", ::getpid());
    std::error_code ec;
    fs::rename(home, kept, ec);
    fmt::print(stderr, "soak: its LLMX_HOME is kept in {}{}\n", kept.string(), ec ? " (could not move: " + ec.message() + ")" : "");
  }
  // Flat after warm-up: the samples of the first fifth against the last fifth.
  auto fifth = std::max<size_t>(1, samples.size() / 5);
  auto peak = [&](size_t from, size_t to, auto field) {
    long m = 0;
    for (size_t i = from; i < to && i < samples.size(); ++i) m = std::max<long>(m, static_cast<long>(field(samples[i])));
    return m;
  };
  auto rss = [](const Sample& s) { return s.rss_kib; };
  auto fds = [](const Sample& s) { return s.fds; };
  const size_t n = samples.size();
  std::string trace;  // RSS at each tenth of the run, to see a trend rather than two points
  for (size_t k = 1; k <= 10 && n > 0; ++k)
    trace += fmt::format("{}{:.0f}", trace.empty() ? "" : " ", samples[std::min(n - 1, k * n / 10)].rss_kib / 1024.0);
  row(fmt::format("| soak: {:.0f} min of mixed load on one mcp-server ({} conversations, {} at once: commands, patches, "
                  "interrupts, cuts, 429s, 5xx, hangs, MCP tool calls) | {} calls ({} answered, {} with an error result, {} "
                  "interrupted); conversations compact at {} tokens; RSS after warm-up {:.0f} MB, at the end {:.0f} MB (peak {:.0f}; "
                  "by tenths: {}); open files {} → {}; "
                  "{} rollouts, {} unreadable, {} compactions, longest history {} items; {} calls unanswered; server CPU {:.0f} s; "
                  "exit code {} |",
                  secs / 60, threads.size(), env.in_flight, next - 1, ok, failed, cancelled, kCompactTokens,
                  peak(fifth, 2 * fifth, rss) / 1024.0, peak(n - fifth, n, rss) / 1024.0, peak(0, n, rss) / 1024.0, trace,
                  peak(fifth, 2 * fifth, fds), peak(n - fifth, n, fds), files, unreadable, compactions, longest_history, open.size(),
                  cpu, code));
}

}  // namespace llmx::bench
