#include "mcp_server_driver.hpp"

#include <fmt/format.h>

namespace llmx::bench {

using namespace std::chrono;

namespace {
std::vector<std::string> argv_of(const McpServerEnv& env) {
  std::vector<std::string> argv{env.llmx, "mcp-server"};
  argv.insert(argv.end(), env.args.begin(), env.args.end());
  return argv;
}
}  // namespace

McpServer::McpServer(const McpServerEnv& env)
    : child_(argv_of(env), {{"LLMX_HOME", env.home}, {"LLMX_BASE_URL", env.url}, {"LLMX_API_KEY", "bench"}}) {}

bool McpServer::initialize() {
  child_.write_line(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
  return wait_for({0}, seconds(10)).failures == 0;
}

std::string McpServer::request(const std::string& method, const std::string& params_json,
                               std::chrono::milliseconds timeout) {
  int64_t id = next_id_++;
  child_.write_line(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"{}","params":{}}})", id, method, params_json));
  auto want = fmt::format(R"("id":{},)", id);
  while (auto line = child_.read_line(timeout))
    if (line->find(want) != std::string::npos && line->find(R"("method")") == std::string::npos) return *line;
  return "";
}

int64_t McpServer::call(const std::string& prompt) {
  int64_t id = next_id_++;
  child_.write_line(fmt::format(
      R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"llmx","arguments":{{"prompt":"{}"}}}}}})",
      id, prompt));
  return id;
}

McpServer::Outcome McpServer::wait_for(std::set<int64_t> ids, milliseconds timeout) {
  Outcome out;
  auto deadline = steady_clock::now() + timeout;
  while (!ids.empty()) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) break;
    auto line = child_.read_line(left);
    if (!line) break;
    try {
      auto root = parser_.parse(*line);
      auto obj = root.get_object().value_unsafe();
      if (json::get(obj, "method")) {
        ++out.notifications;
        continue;
      }
      auto id = json::get_int(obj, "id");
      if (!id || !ids.erase(*id)) continue;
      bool is_error = json::get(obj, "error").has_value();
      if (auto res = json::get(obj, "result"); res && res->is_object())
        is_error |= json::get_bool(res->get_object().value_unsafe(), "isError").value_or(false);
      ++(is_error ? out.failures : out.completed);
    } catch (const std::exception&) {
    }
  }
  out.failures += ids.size();
  return out;
}

}  // namespace llmx::bench
