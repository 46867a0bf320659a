#include "test/support/harness.hpp"

#include "protocol/base/files.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "protocol/base/json_writer.hpp"

#ifndef LLMX_BIN
#error "LLMX_BIN must be defined (path of the llmx binary)"
#endif
#ifndef MOCK_LLM_BIN
#error "MOCK_LLM_BIN must be defined (path of the mock-llm binary)"
#endif

namespace llmx::test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
// A server that dies mid-test must fail the test with its diagnostics (write_stdin returns false
// on EPIPE), not kill the whole test binary with SIGPIPE. Children get SIG_DFL back after fork.
const bool kSigpipeIgnored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();
}  // namespace

namespace {


std::string shorten(std::string_view s, size_t max = 400) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "...(" + std::to_string(s.size()) + " bytes)";
}

}  // namespace

const std::vector<std::string>& llmx_vars() {
  static const std::vector<std::string> vars = {
      "LLMX_HOME",        "LLMX_BASE_URL",     "LLMX_API_KEY", "LLMX_MAX_LINE_BYTES",
      "LLMX_OSS_BASE_URL", "LLMX_OSS_PORT",    "OPENAI_API_KEY", "LLMX_INTERNAL_ORIGINATOR_OVERRIDE",
      "OPENAI_BASE_URL",  "CODEX_API_KEY",     "LLMX_LISTEN_TOKEN",
      "http_proxy",       "https_proxy",       "HTTP_PROXY",   "HTTPS_PROXY", "ALL_PROXY", "all_proxy"};
  return vars;
}

// --- small helpers ------------------------------------------------------------------------------

std::string json_quote(std::string_view text) {
  std::string out;
  json::append_escaped(out, text);
  return out;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    lines.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

namespace {
std::pair<std::string, int> host_port(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find('/'));
  auto colon = url.rfind(':');
  if (colon == std::string_view::npos) throw std::runtime_error("no port in URL: " + std::string(url));
  return {std::string(url.substr(0, colon)), std::atoi(std::string(url.substr(colon + 1)).c_str())};
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

std::string http_get(std::string_view base_url, std::string_view path, Duration timeout) {
  auto [host, port] = host_port(base_url);
  Fd s{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("bad host " + host);
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("connect to " + std::string(base_url) + ": " + std::strerror(errno));
  std::string req = "GET " + std::string(path) + " HTTP/1.0\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  if (::send(s.fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
    throw std::runtime_error("send failed");
  std::string resp;
  const auto deadline = Clock::now() + timeout;
  char buf[65536];
  while (true) {
    ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n > 0) {
      resp.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR && Clock::now() < deadline) continue;
    if (n < 0) throw std::runtime_error("GET " + std::string(path) + ": " + std::strerror(errno));
    break;
  }
  auto sep = resp.find("\r\n\r\n");
  if (sep == std::string::npos || resp.compare(0, 5, "HTTP/") != 0)
    throw std::runtime_error("GET " + std::string(path) + ": malformed response: " + shorten(resp));
  int status = std::atoi(resp.c_str() + resp.find(' ') + 1);
  if (status < 200 || status > 299)
    throw std::runtime_error("GET " + std::string(path) + ": HTTP " + std::to_string(status));
  return resp.substr(sep + 4);
}

int closed_port() {
  Fd s{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("closed_port: " + std::string(std::strerror(errno)));
  return ntohs(addr.sin_port);  // never listened on; the socket closes on return
}

// --- MockLlm ------------------------------------------------------------------------------------

MockLlm::MockLlm(std::vector<std::string> extra_args) {
  SpawnOptions o;
  // --exit-on-stdin-eof: if the test process dies, the mock goes with it.
  o.argv = {MOCK_LLM_BIN, "--exit-on-stdin-eof"};
  o.argv.insert(o.argv.end(), extra_args.begin(), extra_args.end());
  proc_ = std::make_unique<ChildProcess>(std::move(o));
  auto line = proc_->read_line();
  if (!line || line->rfind("http://", 0) != 0) {
    auto st = proc_->terminate();
    throw std::runtime_error("mock-llm did not print its URL (got " + (line ? shorten(*line) : "nothing") +
                             "; " + st.describe() + "; stderr: " + proc_->stderr_so_far() + ")");
  }
  url_ = *line;
}

MockLlm::~MockLlm() { proc_->terminate(); }

std::string MockLlm::requests_json() { return http_get(url_, "/_mock/requests"); }

std::string read_file(const std::string& path) { return llmx::files::read(path).value_or(""); }

std::vector<std::string> rollout_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().filename().string().starts_with("rollout-"))
      out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

EnvVars llmx_env(const std::string& llmx_home, const std::string& base_url) {
  return {{"LLMX_HOME", llmx_home}, {"LLMX_BASE_URL", base_url}, {"LLMX_API_KEY", "test"}};
}

// --- Message ------------------------------------------------------------------------------------

Message::Message(std::string line) : line_(std::move(line)), parser_(std::make_shared<json::Parser>()) {
  try {
    root_ = parser_->parse(line_);
  } catch (const json::DecodeError& err) {
    throw std::runtime_error("not a JSON line (" + std::string(err.what()) + "): " + shorten(line_));
  }
}

bool Message::has(std::string_view pointer) const {
  if (!parser_) return false;
  return !root_.at_pointer(pointer).error();
}

json::Element Message::at(std::string_view pointer) const {
  if (!parser_) throw std::runtime_error("empty message");
  auto r = root_.at_pointer(pointer);
  if (r.error()) throw std::runtime_error("no `" + std::string(pointer) + "` in " + shorten(line_));
  return r.value_unsafe();
}

std::string Message::str(std::string_view pointer) const {
  auto e = at(pointer);
  if (!e.is_string()) throw std::runtime_error("`" + std::string(pointer) + "` is not a string in " + shorten(line_));
  return std::string(e.get_string().value_unsafe());
}

int64_t Message::integer(std::string_view pointer) const {
  auto e = at(pointer);
  if (!e.is_int64()) throw std::runtime_error("`" + std::string(pointer) + "` is not an integer in " + shorten(line_));
  return e.get_int64().value_unsafe();
}

bool Message::boolean(std::string_view pointer) const {
  auto e = at(pointer);
  if (!e.is_bool()) throw std::runtime_error("`" + std::string(pointer) + "` is not a boolean in " + shorten(line_));
  return e.get_bool().value_unsafe();
}

std::string Message::text(std::string_view pointer) const { return json::to_text(at(pointer)); }

std::string Message::str_or(std::string_view pointer, std::string fallback) const {
  if (!parser_) return fallback;
  auto r = root_.at_pointer(pointer);
  if (r.error() || !r.value_unsafe().is_string()) return fallback;
  return std::string(r.value_unsafe().get_string().value_unsafe());
}

// --- McpClient ----------------------------------------------------------------------------------

NodeProcess::NodeProcess(const std::string& llmx_home, const std::string& base_url, std::vector<std::string> args,
                         EnvVars env) {
  SpawnOptions o;
  o.argv = {LLMX_BIN, "node", "--exit-on-stdin-eof"};
  if (std::find(args.begin(), args.end(), "--listen") == args.end()) args.insert(args.begin(), {"--listen", "127.0.0.1:0"});
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.unset_env = llmx_vars();
  o.env = llmx_env(llmx_home, base_url);
  o.env.insert(o.env.end(), env.begin(), env.end());
  proc_ = std::make_unique<ChildProcess>(std::move(o));
  auto line = proc_->read_line(std::chrono::seconds(10));
  if (!line || !line->starts_with("listening "))
    throw std::runtime_error("llmx node did not start: " + line.value_or("(no line)") + "; stderr: " + proc_->stderr_so_far());
  address_ = line->substr(10);
}

uint16_t NodeProcess::port() const { return static_cast<uint16_t>(std::stoi(address_.substr(address_.rfind(':') + 1))); }

std::string node_list(const std::vector<std::unique_ptr<NodeProcess>>& nodes) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n->address();
  return out;
}

namespace {
int test_nodes() {
  static const int n = [] {
    const char* v = std::getenv("LLMX_TEST_NODES");
    return v ? std::max(0, std::atoi(v)) : 0;
  }();
  return n;
}
}  // namespace

int streaming_processes() { return std::max(1, test_nodes()); }

McpClient::McpClient(const std::string& llmx_home, const std::string& base_url, McpOptions options) {
  SpawnOptions o;
  o.argv = {LLMX_BIN, options.subcommand};
  app_server_ = options.subcommand == "app-server";
  acp_ = options.subcommand == "acp";
  if (test_nodes() > 0 && std::find(options.args.begin(), options.args.end(), "--nodes") == options.args.end()) {
    for (int i = 0; i < test_nodes(); ++i) nodes_.push_back(std::make_unique<NodeProcess>(llmx_home, base_url, std::vector<std::string>{}, options.env));
    options.args.insert(options.args.begin(), {"--nodes", node_list(nodes_)});
  }
  o.argv.insert(o.argv.end(), options.args.begin(), options.args.end());
  o.unset_env = llmx_vars();
  o.env = llmx_env(llmx_home, base_url);
  o.env.insert(o.env.end(), options.env.begin(), options.env.end());
  o.cwd = options.cwd;
  proc_ = std::make_unique<ChildProcess>(std::move(o));
}

McpClient::~McpClient() {
  proc_->close_stdin();
  proc_->wait(std::chrono::seconds(5));
}

// With LLMX_TRAFFIC_LOG set, app-server traffic is appended there (and mcp-server traffic to
// LLMX_MCP_TRAFFIC_LOG) as {"from":"client"|"server","message":<line>} for schema validation
// (test/js/validate_traffic.mjs --trust-client: the client's lines only type the results,
// bad-input tests send invalid ones).
void McpClient::record(std::string_view from, std::string_view line) {
  static const char* app_path = std::getenv("LLMX_TRAFFIC_LOG");
  static const char* mcp_path = std::getenv("LLMX_MCP_TRAFFIC_LOG");
  // ACP's traffic is checked against the ACP SDK's schema (js/acp_client), not these logs.
  if (acp_) return;
  const char* path = app_server_ ? app_path : mcp_path;
  if (!path || !*path) return;
  // Only lines that are JSON objects: bad-input tests send garbage on purpose.
  try {
    Message probe{std::string(line)};
    if (!probe.root().is_object()) return;
  } catch (const std::exception&) {
    return;
  }
  // `conn` tells the validator which server process a line belongs to, so request ids of
  // different processes (all starting at 1) never answer each other.
  std::ofstream(path, std::ios::app) << R"({"from":")" << from << R"(","conn":)" << proc_->pid() << R"(,"message":)"
                                     << line << "}\n";
}

void McpClient::send_line(std::string_view line) {
  record("client", line);
  std::string data(line);
  data.push_back('\n');
  if (!proc_->write_stdin(data)) throw std::runtime_error("cannot write to mcp-server stdin" + diagnostics());
}

void McpClient::request_with_id(std::string_view id_json, std::string_view method, std::string_view params_json) {
  std::string line = R"({"jsonrpc":"2.0","id":)" + std::string(id_json) + R"(,"method":)" + json_quote(method);
  if (!params_json.empty()) line += R"(,"params":)" + std::string(params_json);
  line += "}";
  send_line(line);
}

std::string McpClient::request(std::string_view method, std::string_view params_json) {
  std::string id = std::to_string(next_id_++);
  request_with_id(id, method, params_json);
  return id;
}

void McpClient::notify(std::string_view method, std::string_view params_json) {
  std::string line = R"({"jsonrpc":"2.0","method":)" + json_quote(method);
  if (!params_json.empty()) line += R"(,"params":)" + std::string(params_json);
  line += "}";
  send_line(line);
}

Message McpClient::initialize(std::string_view protocol_version, std::string_view capabilities) {
  auto id = request("initialize", R"({"protocolVersion":)" + json_quote(protocol_version) + R"(,"capabilities":)" +
                                      std::string(capabilities) +
                                      R"(,"clientInfo":{"name":"llmx-tests","version":"1.0"}})");
  auto resp = wait_for_response(id);
  notify("notifications/initialized");
  return resp;
}

std::string llmx_call_params(std::string_view prompt, std::string_view extra_args, std::string_view meta) {
  std::string params = R"({"name":"llmx","arguments":{"prompt":)" + json_quote(prompt);
  if (!extra_args.empty()) params += "," + std::string(extra_args);
  params += "}";
  if (!meta.empty()) params += R"(,"_meta":)" + std::string(meta);
  params += "}";
  return params;
}

std::string McpClient::call_llmx(std::string_view prompt, std::string_view extra_args, std::string_view meta) {
  return request("tools/call", llmx_call_params(prompt, extra_args, meta));
}

std::string McpClient::call_reply(std::string_view conversation_id, std::string_view prompt) {
  return request("tools/call", R"({"name":"llmx-reply","arguments":{"conversationId":)" +
                                   json_quote(conversation_id) + R"(,"prompt":)" + json_quote(prompt) + "}}");
}

void McpClient::respond(std::string_view id_json, std::string_view result_json) {
  send_line(R"({"jsonrpc":"2.0","id":)" + std::string(id_json) + R"(,"result":)" + std::string(result_json) + "}");
}

void McpClient::respond_error(std::string_view id_json, int code, std::string_view message) {
  send_line(R"({"jsonrpc":"2.0","id":)" + std::string(id_json) + R"(,"error":{"code":)" + std::to_string(code) +
            R"(,"message":)" + json_quote(message) + "}}");
}

bool McpClient::read_one(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  auto line = proc_->read_line(timeout);
  // Dropped lines do not count as the one line read: keep reading within the same time bound.
  while (line && !drop_needle_.empty() && line->find(drop_needle_) != std::string::npos) {
    ++dropped_lines_;
    dropped_bytes_ += line->size() + 1;
    line = proc_->read_line(remaining(deadline));
  }
  if (!line) return false;
  record("server", *line);
  try {
    Message m(std::move(*line));
    m.index_ = log_.size();
    log_.push_back(std::move(m));
  } catch (const std::exception& err) {
    throw std::runtime_error(std::string("mcp-server wrote ") + err.what() + diagnostics());
  }
  return true;
}

std::optional<Message> McpClient::next(Duration timeout) {
  if (cursor_ == log_.size() && !read_one(timeout)) return std::nullopt;
  return log_[cursor_++];
}

Message McpClient::wait_for(const Predicate& pred, std::string_view what, Duration timeout) {
  auto found = [&](const Message& m) {
    cursor_ = std::max(cursor_, m.index() + 1);
    return m;
  };
  for (const auto& m : log_)
    if (pred(m)) return found(m);
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (!read_one(remaining(deadline))) {
      bool eof = proc_->last_read() == ReadResult::eof;
      throw std::runtime_error(std::string(eof ? "mcp-server closed stdout" : "timed out") + " waiting for " +
                               std::string(what) + diagnostics());
    }
    if (pred(log_.back())) return found(log_.back());
  }
}

Message McpClient::wait_for_response(std::string_view id_json, Duration timeout) {
  std::string id(id_json);
  return wait_for([&](const Message& m) { return m.is_response() && m.id() == id; }, "the response to id " + id,
                  timeout);
}

std::vector<Message> McpClient::collect_until(const Predicate& until, std::string_view what, Duration timeout) {
  std::vector<Message> out;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    auto m = next(remaining(deadline));
    if (!m) throw std::runtime_error("timed out collecting messages until " + std::string(what) + diagnostics());
    out.push_back(*m);
    if (until(*m)) return out;
  }
}

void McpClient::drain(Duration quiet) {
  while (read_one(quiet)) {
  }
}

std::vector<Message> McpClient::events_for(std::string_view id_json) const {
  std::vector<Message> out;
  for (const auto& m : log_)
    if (m.is_event() && m.event_request_id() == id_json) out.push_back(m);
  return out;
}

std::vector<Message> McpClient::responses_for(std::string_view id_json) const {
  std::vector<Message> out;
  for (const auto& m : log_)
    if (m.is_response() && m.id() == id_json) out.push_back(m);
  return out;
}

ExitStatus McpClient::wait_exit(Duration timeout) {
  // Keep the log complete: read what is left on stdout while waiting.
  const auto deadline = Clock::now() + timeout;
  while (!proc_->stdout_eof() && remaining(deadline).count() > 0) read_one(remaining(deadline));
  return proc_->wait(remaining(deadline));
}

std::string McpClient::diagnostics() {
  std::string d = "\n--- mcp-server state: ";
  if (auto st = proc_->try_wait())
    d += st->describe();
  else
    d += "running";
  d += "\n--- last lines from stdout:";
  size_t from = log_.size() > 6 ? log_.size() - 6 : 0;
  for (size_t i = from; i < log_.size(); ++i) d += "\n  " + shorten(log_[i].line(), 300);
  d += "\n--- stderr:\n" + shorten(proc_->stderr_so_far(), 4000);
  return d;
}

McpOptions app_server_options(McpOptions base) {
  base.subcommand = "app-server";
  return base;
}

void AppServerFixture::initialize() {
  auto r = c.wait_for_response(c.request("initialize", R"({"clientInfo":{"name":"tests","version":"1.0"}})"));
  if (r.is_error()) throw std::runtime_error("app-server initialize failed: " + r.line());
}

std::string AppServerFixture::start_thread(const std::string& params) {
  auto r = c.wait_for_response(c.request("thread/start", params));
  if (r.is_error()) throw std::runtime_error("thread/start failed: " + r.line());
  return r.str("/result/thread/id");
}

size_t array_size(const Message& m, std::string_view pointer) {
  auto e = m.at(pointer);
  if (!e.is_array()) throw std::runtime_error("not an array at " + std::string(pointer) + ": " + m.line());
  return e.get_array().value_unsafe().size();
}

std::string result_text(const Message& response) { return response.str("/result/content/0/text"); }

bool result_is_error(const Message& response) {
  return response.has("/result/isError") && response.boolean("/result/isError");
}

std::string joined_deltas(const std::vector<Message>& events) {
  std::string out;
  for (const auto& e : events)
    if (e.event_type() == "agent_message_delta") out += e.str("/params/msg/delta");
  return out;
}

std::vector<Message> events_of_type(const std::vector<Message>& events, std::string_view type) {
  std::vector<Message> out;
  for (const auto& e : events)
    if (e.event_type() == type) out.push_back(e);
  return out;
}

ExecJson run_exec_json(const std::vector<std::string>& flags, const std::string& prompt, const EnvVars& env,
                       Duration timeout, const std::string& cwd) {
  std::vector<std::string> args = {"exec", "--skip-git-repo-check", "--core-events"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.push_back(prompt);
  ExecJson r;
  r.raw = run_llmx(args, env, timeout, cwd);
  r.events = parse_json_lines(r.raw.out);
  return r;
}

std::string ExecJson::problem() const {
  std::string why;
  if (!ok()) why = raw.status.describe();
  else if (events.empty()) why = "no events";
  else if (events.back().event_type() != "task_complete") why = "last event is " + events.back().event_type();
  return why.empty() ? why : why + "; stderr: " + raw.err;
}

std::vector<Message> parse_json_lines(std::string_view text) {
  std::vector<Message> out;
  for (auto& line : split_lines(text)) out.emplace_back(std::move(line));
  return out;
}

Message recorded_requests(MockLlm& mock) { return Message(mock.requests_json()); }

std::vector<std::string> tool_messages(const Message& requests, long index) {
  auto all = requests.at("/requests");
  if (!all.is_array()) throw std::runtime_error("/requests is not an array");
  const long n = static_cast<long>(all.get_array().value_unsafe().size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) throw std::runtime_error("no request #" + std::to_string(index));
  std::vector<std::string> out;
  const std::string base = "/requests/" + std::to_string(index) + "/messages";
  const auto messages = requests.at(base);
  const size_t m = messages.is_array() ? messages.get_array().value_unsafe().size() : 0;
  for (size_t i = 0; i < m; ++i) {
    const std::string p = base + "/" + std::to_string(i);
    if (requests.str_or(p + "/role", "") != "tool") continue;
    out.push_back(requests.at(p + "/content").is_string() ? requests.str(p + "/content") : requests.text(p + "/content"));
  }
  return out;
}

// --- processes ----------------------------------------------------------------------------------

namespace {
std::string slurp(const std::string& path) { return read_file(path); }
}  // namespace

void kill_processes_with_argv(const std::vector<std::string>& argv) {
  for (pid_t pid : processes_with_argv(argv)) ::kill(pid, SIGKILL);
}

std::vector<pid_t> processes_with_argv(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const auto& a : argv) wanted += a + '\0';
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (slurp(entry.path().string() + "/cmdline") != wanted) continue;
    // Zombies have an empty cmdline already, but check the state to be sure.
    const std::string stat = slurp(entry.path().string() + "/stat");
    const auto paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X'))
      continue;
    out.push_back(static_cast<pid_t>(std::atol(name.c_str())));
  }
  return out;
}

bool wait_until_no_process(const std::vector<std::string>& argv, Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (processes_with_argv(argv).empty()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool wait_until_running(const std::vector<std::string>& argv, size_t count, Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (processes_with_argv(argv).size() < count) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::vector<std::string> unique_sleep(int seconds) {
  static std::atomic<int> n{0};
  return {"sleep", std::to_string(seconds) + "." + std::to_string(::getpid()) + std::to_string(++n)};
}

long peak_rss_kib(pid_t pid) {
  const std::string status = slurp("/proc/" + std::to_string(pid) + "/status");
  auto at = status.find("VmHWM:");
  if (at == std::string::npos) return -1;
  return std::atol(status.c_str() + at + 6);
}

// --- llmx exec ----------------------------------------------------------------------------------

// With LLMX_EXEC_EVENTS_LOG set, the stdout of every `llmx exec --json` run is appended there,
// for validation against the exported ExecThreadEvent schema (test/js/exec_traffic.cmake).
static void record_exec_events(const std::vector<std::string>& args, const std::string& out) {
  static const char* path = std::getenv("LLMX_EXEC_EVENTS_LOG");
  if (!path || !*path || args.empty() || args[0] != "exec") return;
  if (std::find_if(args.begin(), args.end(), [](const std::string& a) {
        return a == "--json" || a == "--experimental-json";
      }) == args.end())
    return;
  std::ofstream(path, std::ios::app) << out;
}

std::string llmx_binary() { return LLMX_BIN; }

ExecResult run_llmx_at(const std::string& binary, const std::vector<std::string>& args, const EnvVars& env,
                       Duration timeout, const std::string& cwd) {
  SpawnOptions o;
  o.argv = {binary};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.unset_env = llmx_vars();
  o.env = env;
  o.cwd = cwd;
  ChildProcess p(std::move(o));
  p.close_stdin();
  ExecResult r;
  r.status = p.wait(timeout);
  r.out = p.read_all_stdout(std::chrono::milliseconds(1000));
  r.err = p.read_all_stderr(std::chrono::milliseconds(1000));
  return r;
}

ExecResult run_llmx(const std::vector<std::string>& args, const EnvVars& env, Duration timeout,
                    const std::string& cwd) {
  auto r = run_llmx_at(LLMX_BIN, args, env, timeout, cwd);
  record_exec_events(args, r.out);
  return r;
}

}  // namespace llmx::test
