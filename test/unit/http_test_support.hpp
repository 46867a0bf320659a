// What the HTTP client's unit tests share: loopback cpp-httplib servers, a raw one-connection
// server for wire details httplib cannot produce, and a handler that records every callback.
// Every wait is bounded so a broken client fails a test instead of hanging it.
#pragma once

#include "test/support/loopback.hpp"

#include "transport/http_client.hpp"

#include <doctest/doctest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace http_test {

using namespace std::chrono_literals;
using llmx::http::Client;
using llmx::http::Handler;
using llmx::http::Request;
using llmx::http::ResponseHead;

inline constexpr auto kWait = 10s;

// A one-shot flag both sides can wait on, with a deadline.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    std::lock_guard lk(mu);
    open = true;
    cv.notify_all();
  }
  bool wait(std::chrono::milliseconds t = kWait) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, t, [&] { return open; });
  }
};

// Unblocks server handlers when a test ends, even through a failed REQUIRE.
struct ReleaseOnExit {
  Gate& g;
  ~ReleaseOnExit() { g.release(); }
};

// Records every callback; tests wait on it with deadlines.
struct Recorder : Handler {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;  // "head", "body", "done" in arrival order
  std::vector<std::string> chunks;
  ResponseHead head;
  std::string error;
  int heads = 0, dones = 0;
  std::function<void(std::string_view)> body_hook;  // runs on the loop thread
  std::function<void()> head_hook;                  // runs on the loop thread

  void on_head(const ResponseHead& h) override {
    {
      std::lock_guard lk(mu);
      head = h;
      ++heads;
      events.push_back("head");
      cv.notify_all();
    }
    if (head_hook) head_hook();
  }
  void on_body(std::string_view chunk) override {
    {
      std::lock_guard lk(mu);
      chunks.emplace_back(chunk);
      events.push_back("body");
      cv.notify_all();
    }
    if (body_hook) body_hook(chunk);
  }
  void on_done(const std::string& err) override {
    std::lock_guard lk(mu);
    error = err;
    ++dones;
    events.push_back("done");
    cv.notify_all();
  }

  bool wait_for(std::function<bool()> pred, std::chrono::milliseconds t = kWait) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, t, pred);
  }
  bool wait_done() { return wait_for([&] { return dones > 0; }); }
  bool wait_head() { return wait_for([&] { return heads > 0 || dones > 0; }); }
  std::string body() {
    std::lock_guard lk(mu);
    std::string s;
    for (auto& c : chunks) s += c;
    return s;
  }
};

// httplib server on an OS-chosen loopback port, listening on its own thread.
struct TestServer {
  httplib::Server svr;
  int port = -1;
  std::thread th;

  explicit TestServer(const std::function<void(httplib::Server&)>& setup, int threads = 0) {
    if (threads > 0) svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    setup(svr);
    int listen_fd = -1;
    svr.set_socket_options([&listen_fd](int fd) {
      listen_fd = fd;
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      // Inherited by accepted sockets; without it httplib's separate head/body writes hit
      // Nagle + delayed ACK (~40 ms per response on a reused connection).
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    });
    port = svr.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    // httplib listens with a backlog of 5: a burst of concurrent connects would see dropped
    // SYNs and 1 s retransmits. Linux lets listen() be called again to raise it.
    ::listen(listen_fd, 1024);
    th = std::thread([this] { svr.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs; wait for it (bounded) so teardown works.
    auto deadline = std::chrono::steady_clock::now() + kWait;
    while (!svr.is_running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    REQUIRE(svr.is_running());
  }
  ~TestServer() {
    svr.stop();
    th.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
};

inline Request get(const std::string& url) {
  Request r;
  r.method = "GET";
  r.url = url;
  return r;
}

inline Request post(const std::string& url, std::string body) {
  Request r;
  r.url = url;
  r.body = std::move(body);
  return r;
}

// A loopback port with nothing listening on it.
inline int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One-connection server speaking canned bytes, for wire details httplib cannot produce.
struct RawServer {
  int fd = -1;
  int port = 0;
  std::string response;
  std::string request;  // what the client sent (head + body), readable after join()
  std::thread th;

  explicit RawServer(std::string canned) : response(std::move(canned)) {
    auto l = llmx::test::listen_on_loopback(4);
    fd = l.fd;
    port = l.port;
    th = std::thread([this] { serve(); });
  }
  ~RawServer() {
    join();
    ::close(fd);
  }
  void join() {
    if (th.joinable()) th.join();
  }
  // Each step waits at most 10 s, so a client that never connects cannot hang the test.
  bool readable(int s) {
    pollfd p{s, POLLIN, 0};
    return ::poll(&p, 1, 10000) == 1;
  }
  void serve() {
    if (!readable(fd)) return;
    int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    size_t need = std::string::npos;
    while (request.size() < need && readable(c)) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      request.append(buf, static_cast<size_t>(n));
      auto end = request.find("\r\n\r\n");
      if (need == std::string::npos && end != std::string::npos) {
        size_t body = 0;
        auto cl = request.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) body = std::stoul(request.substr(cl + 16));
        need = end + 4 + body;
      }
    }
    ::send(c, response.data(), response.size(), MSG_NOSIGNAL);
    ::close(c);
  }
};

// The client ports a server saw: one per connection the client opened.
struct PortLog {
  std::mutex mu;
  std::set<int> ports;
  void saw(const httplib::Request& req) {
    std::lock_guard lk(mu);
    ports.insert(req.remote_port);
  }
  size_t count() {
    std::lock_guard lk(mu);
    return ports.size();
  }
};

}  // namespace http_test
