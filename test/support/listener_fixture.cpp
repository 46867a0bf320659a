#include "test/support/listener_fixture.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace llmx::test {

using Clock = std::chrono::steady_clock;

Listener::Listener(const std::string& llmx_home, const std::string& base_url, ListenOptions options) {
  SpawnOptions o;
  o.argv = {LLMX_BIN, options.subcommand, "--listen", options.url};
  o.unset_env = llmx_vars();
  o.env = llmx_env(llmx_home, base_url);
  o.env.insert(o.env.end(), options.env.begin(), options.env.end());
  proc_ = std::make_unique<ChildProcess>(std::move(o));
  auto line = proc_->read_line(std::chrono::seconds(10));
  if (!line || !line->starts_with("listening "))
    throw std::runtime_error("llmx --listen did not start: " + line.value_or("(no line)") + "; stderr: " +
                             proc_->stderr_so_far());
  endpoint_ = line->substr(10);
  auto after_host = endpoint_.find(':', endpoint_.find("//") + 2);
  port_ = static_cast<uint16_t>(std::stoi(endpoint_.substr(after_host + 1)));
}

Listener::~Listener() { proc_->terminate(); }

httplib::Client Listener::client(std::chrono::seconds read_timeout) const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(read_timeout);
  c.set_connection_timeout(std::chrono::seconds(5));
  c.set_tcp_nodelay(true);
  return c;
}

httplib::Headers mcp_headers(const std::string& session, const std::string& version) {
  httplib::Headers h{{"Accept", "application/json, text/event-stream"}};
  if (!session.empty()) h.emplace("Mcp-Session-Id", session);
  if (!version.empty()) h.emplace("MCP-Protocol-Version", version);
  return h;
}

std::vector<Message> messages_of(const httplib::Result& r) {
  std::vector<Message> out;
  if (!r) return out;
  if (r->get_header_value("Content-Type").starts_with("application/json")) {
    out.emplace_back(r->body);
    return out;
  }
  size_t start = 0;
  while (start < r->body.size()) {
    auto end = r->body.find('\n', start);
    if (end == std::string::npos) end = r->body.size();
    std::string_view line(r->body.data() + start, end - start);
    if (line.starts_with("data: ")) out.emplace_back(std::string(line.substr(6)));
    start = end + 1;
  }
  return out;
}

void record_exchange(const httplib::Headers& request_headers, const std::string& body, const httplib::Result& r) {
  static const char* path = std::getenv("LLMX_MCP_TRAFFIC_LOG");
  static std::atomic<int> stateless{0};
  if (!path || !*path || !r) return;
  std::string conn;
  if (auto sid = r->get_header_value("Mcp-Session-Id"); !sid.empty()) conn = sid;
  else if (auto it = request_headers.find("Mcp-Session-Id"); it != request_headers.end()) conn = it->second;
  else conn = "http-" + std::to_string(::getpid()) + "-" + std::to_string(stateless++);
  auto line = [&](std::string_view from, std::string_view message) {
    std::ofstream(path, std::ios::app) << R"({"from":")" << from << R"(","conn":)" << json_quote(conn)
                                       << R"(,"message":)" << message << "}\n";
  };
  try {
    if (!Message(body).root().is_object()) return;  // bad-input tests post garbage on purpose
  } catch (const std::exception&) {
    return;
  }
  line("client", body);
  for (const auto& m : messages_of(r))
    if (m.root().is_object()) line("server", m.line());
}

Message last_message(const httplib::Result& r) {
  auto all = messages_of(r);
  if (all.empty()) throw std::runtime_error("no JSON-RPC message in the answer");
  return all.back();
}

RawSocket::RawSocket(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawSocket::~RawSocket() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawSocket::send(std::string_view bytes) {
  while (!bytes.empty()) {
    auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string RawSocket::read_until_close(Duration timeout) {
  std::string out;
  auto deadline = Clock::now() + timeout;
  char buf[16384];
  while (Clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) break;
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RawSocket::closed_within(Duration timeout) {
  auto deadline = Clock::now() + timeout;
  char buf[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) return false;
    if (::recv(fd_, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

bool some_turn_aborted(const std::string& llmx_home, Duration timeout) {
  namespace fs = std::filesystem;
  auto deadline = Clock::now() + timeout;
  while (true) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(llmx_home, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->path().extension() == ".jsonl" && contains(read_file(it->path().string()), "\"turn_aborted\""))
        return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace llmx::test
