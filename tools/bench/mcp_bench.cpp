#include "mcp_bench.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/mcp_client.hpp"
#include "bench_stats.hpp"
#include "process.hpp"
#include "protocol/base/json_reader.hpp"

namespace llmx::bench {

namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

constexpr int kCalls = 500;
constexpr std::string_view kEchoArgs = R"({"message":"bench"})";

double ms(steady_clock::duration d) { return duration<double, std::milli>(d).count(); }

// Live processes whose command line contains `marker` (the servers this bench started).
size_t processes_with(std::string_view marker) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::ifstream in(e.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) ++n;
  }
  return n;
}

// The baseline: the same server over its pipes, one echo call after the other.
std::vector<double> direct_calls(const McpBenchEnv& env) {
  std::vector<double> samples;
  Child server({env.node, env.fake_server, "ok", "bench-direct"}, {});
  server.write_line(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
  if (!server.read_line(seconds(10))) return samples;
  server.write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  for (int i = 1; i <= kCalls + 20; ++i) {
    auto t0 = steady_clock::now();
    server.write_line(fmt::format(
        R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{},"_meta":{{"progressToken":{}}}}}}})",
        i, kEchoArgs, i));
    if (!server.read_line(seconds(10))) break;
    if (i > 20) samples.push_back(ms(steady_clock::now() - t0));  // after a warm-up
  }
  return samples;
}

// Through llmx: a caller asks the server's client actor (found through the hub), which writes
// to the child through the shared process loop and answers from its reader.
std::vector<double> client_calls(const McpBenchEnv& env, size_t& failures) {
  std::vector<double> samples;
  caf::actor_system_config cfg;
  configure_system(cfg);
  caf::actor_system sys{cfg};
  auto hub = spawn_mcp_hub(sys);
  {
    caf::scoped_actor self{sys};
    McpServerConfig server;
    server.command = env.node;
    server.args = {env.fake_server, "ok", "bench-client"};
    McpConnect connect;
    connect.servers["bench"] = server;
    std::optional<mcp_client_actor> client;
    self->request(hub, seconds(30), connect)
        .receive(
            [&](McpServers& s) {
              if (!s.servers.empty() && s.servers[0].ready) client = caf::actor_cast<mcp_client_actor>(s.servers[0].client);
            },
            [&](caf::error&) {});
    if (!client) {
      failures = kCalls;
      caf::anon_send_exit(hub, caf::exit_reason::user_shutdown);
      return samples;
    }
    for (int i = 1; i <= kCalls + 20; ++i) {
      McpCall call{fmt::format("bench/{}", i), "echo", RawJson{std::string(kEchoArgs)}, {}};
      auto t0 = steady_clock::now();
      self->request(*client, seconds(10), std::move(call))
          .receive(
              [&](McpCallResult& r) {
                if (!r.ok) ++failures;
                if (i > 20) samples.push_back(ms(steady_clock::now() - t0));
              },
              [&](caf::error&) { ++failures; });
    }
  }
  caf::anon_send_exit(hub, caf::exit_reason::user_shutdown);
  return samples;
}

// `llmx mcp-server` with one configured server; `n` tools/call turns at once, each making the
// model call the server's echo tool. Every conversation uses the one server process.
void shared_server(const McpBenchEnv& env, const std::function<void(std::string)>& row) {
  auto home = fs::path(env.home) / "mcp-shared";
  fs::create_directories(home);
  std::ofstream(home / "config.toml") << fmt::format("[mcp_servers.bench]\ncommand = \"{}\"\nargs = [\"{}\", \"ok\", \"bench-shared\"]\n",
                                                     env.node, env.fake_server);
  Child llmx({env.llmx, "mcp-server"}, {{"LLMX_HOME", home.string()}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}});
  llmx.write_line(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
  if (!llmx.read_line(seconds(10))) return row("| MCP: shared server | llmx did not start |");
  auto t0 = steady_clock::now();
  std::set<int64_t> open;
  for (int i = 1; i <= env.conversations; ++i) {
    open.insert(i);
    llmx.write_line(fmt::format(
        R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"llmx","arguments":{{"prompt":"@mock:tool name=mcp__bench__echo args={{\"message\":\"c{}\"}}","sandbox":"read-only"}}}}}})",
        i, i));
  }
  size_t failed = 0, ok = 0;
  json::Parser parser;
  auto deadline = steady_clock::now() + seconds(120);
  while (!open.empty() && steady_clock::now() < deadline) {
    auto line = llmx.read_line(duration_cast<milliseconds>(deadline - steady_clock::now()));
    if (!line) break;
    try {
      auto o = parser.parse(*line).get_object().value_unsafe();
      if (json::get(o, "method")) continue;
      auto id = json::get_int(o, "id");
      if (!id || !open.erase(*id)) continue;
      auto text = json::to_text(*json::get(o, "result"));
      bool good = text.find("echo: c") != std::string::npos && text.find("\"isError\":true") == std::string::npos;
      ++(good ? ok : failed);
    } catch (const std::exception&) {
    }
  }
  failed += open.size();
  auto wall = ms(steady_clock::now() - t0);
  auto servers = processes_with("bench-shared");
  row(fmt::format("| MCP: {} conversations calling one shared server at once | {} answered, {} failed, {:.0f} ms "
                  "wall, {} server process{} |",
                  env.conversations, ok, failed, wall, servers, servers == 1 ? "" : "es"));
}

}  // namespace

void mcp_rows(const McpBenchEnv& env, const std::function<void(std::string)>& row) {
  auto direct = direct_calls(env);
  size_t failures = 0;
  auto through = client_calls(env, failures);
  if (direct.empty() || through.empty()) {
    row("| MCP: tool call overhead | the server did not start |");
  } else {
    auto d = median(direct), c = median(through);
    row(fmt::format("| MCP: echo tool call, direct over pipes vs through llmx's client actor (median of {}) | {:.3f} "
                    "ms vs {:.3f} ms: llmx adds {:.3f} ms ({} failed) |",
                    kCalls, d, c, c - d, failures));
  }
  shared_server(env, row);
}

}  // namespace llmx::bench
