// Unit tests for the streaming HTTP client against loopback cpp-httplib servers.
// Every wait is bounded so a broken client fails a test instead of hanging it.
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

using namespace std::chrono_literals;
using llmx::http::Client;
using llmx::http::Handler;
using llmx::http::Request;
using llmx::http::ResponseHead;

namespace {

constexpr auto kWait = 10s;

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

Request get(const std::string& url) {
  Request r;
  r.method = "GET";
  r.url = url;
  return r;
}

Request post(const std::string& url, std::string body) {
  Request r;
  r.url = url;
  r.body = std::move(body);
  return r;
}

// A loopback port with nothing listening on it.
int closed_port() {
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
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
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

}  // namespace

TEST_CASE("http interim 1xx is skipped, trailers ignored, empty header values sent") {
  RawServer srv(
      "HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n"
      "HTTP/1.1 200 OK\r\nX-A:  spaced value \r\nTransfer-Encoding: chunked\r\n"
      "Trailer: X-T\r\nConnection: close\r\n\r\n"
      "5\r\nhello\r\n6\r\n world\r\n0\r\nX-T: t\r\n\r\n");
  Client client;
  Request r = post("http://127.0.0.1:" + std::to_string(srv.port) + "/x", "abc");
  r.headers = {{"X-Empty", ""}};
  auto rec = std::make_shared<Recorder>();
  client.start(r, rec);
  REQUIRE(rec->wait_done());
  srv.join();
  CHECK(rec->body() == "hello world");
  std::lock_guard lk(rec->mu);
  CHECK(rec->error == "");
  CHECK(rec->heads == 1);
  CHECK(rec->head.status == 200);
  CHECK(llmx::http::header(rec->head, "x-a") == "spaced value");
  CHECK_FALSE(llmx::http::header(rec->head, "X-Interim").has_value());
  CHECK_FALSE(llmx::http::header(rec->head, "X-T").has_value());
  CHECK(rec->events.front() == "head");
  CHECK(srv.request.find("X-Empty:\r\n") != std::string::npos);
  CHECK(srv.request.find("Expect") == std::string::npos);
  CHECK(srv.request.find("Accept-Encoding") == std::string::npos);
  CHECK(srv.request.ends_with("abc"));
}

TEST_CASE("http header lookup is case-insensitive") {
  ResponseHead h;
  h.headers = {{"Content-Type", "text/event-stream"}, {"X-Request-Id", "abc"}};
  CHECK(llmx::http::header(h, "content-type") == "text/event-stream");
  CHECK(llmx::http::header(h, "X-REQUEST-ID") == "abc");
  CHECK_FALSE(llmx::http::header(h, "x-request").has_value());
}

TEST_CASE("http streamed chunked response arrives in order, head first") {
  // The server sends chunk i+1 only after the client saw chunk i: proves bodies are delivered
  // as they arrive, not buffered until the end.
  auto rec = std::make_shared<Recorder>();
  const std::vector<std::string> parts = {"data: one\n\n", "data: two\n\n", "data: three\n\n"};
  TestServer srv([&](httplib::Server& s) {
    s.Get("/stream", [&](const httplib::Request&, httplib::Response& res) {
      res.set_header("X-Custom-Thing", "hello");
      res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
        for (size_t i = 0; i < parts.size(); ++i) {
          if (!sink.write(parts[i].data(), parts[i].size())) return false;
          if (!rec->wait_for([&] { return rec->chunks.size() > i; })) return false;
        }
        sink.done();
        return true;
      });
    });
  });
  Client client;
  client.start(get(srv.url("/stream")), rec);
  REQUIRE(rec->wait_done());
  std::lock_guard lk(rec->mu);
  CHECK(rec->error == "");
  CHECK(rec->head.status == 200);
  CHECK(llmx::http::header(rec->head, "x-custom-thing") == "hello");
  CHECK(llmx::http::header(rec->head, "CONTENT-TYPE") == "text/event-stream");
  CHECK(rec->chunks == parts);
  REQUIRE(rec->events.size() == 5);
  CHECK(rec->events.front() == "head");
  CHECK(rec->events.back() == "done");
  CHECK(client.active() == 0);
}

TEST_CASE("http a paused transfer delivers nothing until it reads on, then everything in order") {
  auto rec = std::make_shared<Recorder>();
  Gate served;
  ReleaseOnExit release{served};
  TestServer srv([&](httplib::Server& s) {
    s.Get("/stream", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
        if (!sink.write("data: one\n\n", 11) || !sink.write("data: two\n\n", 11)) return false;
        served.release();
        sink.done();
        return true;
      });
    });
  });
  Client client;
  auto id = client.start(get(srv.url("/stream")), rec);
  client.pause(id, true);  // applied with the start, before any byte is read
  REQUIRE(served.wait());
  std::this_thread::sleep_for(300ms);
  {
    std::lock_guard lk(rec->mu);
    CHECK(rec->chunks.empty());  // the response is there, but no byte of its body was handed over
  }
  client.pause(id, false);
  REQUIRE(rec->wait_done());
  std::lock_guard lk(rec->mu);
  CHECK(rec->error == "");
  CHECK(rec->head.status == 200);
  std::string body;
  for (auto& c : rec->chunks) body += c;
  CHECK(body == "data: one\n\ndata: two\n\n");
  CHECK(rec->events.front() == "head");
  CHECK(rec->events.back() == "done");
  client.pause(id, true);  // an ended transfer: ignored
  CHECK(client.active() == 0);
}

TEST_CASE("http POST body and request headers reach the server") {
  std::mutex mu;
  std::string got_method, got_body, got_key, got_type, got_expect;
  TestServer srv([&](httplib::Server& s) {
    s.Post("/v1/chat", [&](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lk(mu);
      got_method = req.method;
      got_body = req.body;
      got_key = req.get_header_value("x-api-key");
      got_type = req.get_header_value("Content-Type");
      got_expect = req.get_header_value("Expect");
      res.set_content("ok", "text/plain");
    });
  });
  Client client;
  // Larger than 1 KiB so curl would normally add "Expect: 100-continue".
  std::string body = "{\"prompt\":\"" + std::string(200000, 'x') + "\"}";
  Request r = post(srv.url("/v1/chat"), body);
  r.headers = {{"Content-Type", "application/json"}, {"X-Api-Key", "secret"}};
  auto rec = std::make_shared<Recorder>();
  client.start(r, rec);
  REQUIRE(rec->wait_done());
  CHECK(rec->error == "");
  CHECK(rec->head.status == 200);
  CHECK(rec->body() == "ok");
  std::lock_guard lk(mu);
  CHECK(got_method == "POST");
  CHECK(got_body == body);
  CHECK(got_key == "secret");
  CHECK(got_type == "application/json");
  CHECK(got_expect == "");
}

TEST_CASE("http non-2xx status is reported with its body") {
  TestServer srv([](httplib::Server& s) {
    s.Post("/busy", [](const httplib::Request&, httplib::Response& res) {
      res.status = 429;
      res.set_header("Retry-After", "7");
      res.set_content("{\"error\":\"rate limited\"}", "application/json");
    });
  });
  Client client;
  auto rec = std::make_shared<Recorder>();
  client.start(post(srv.url("/busy"), "{}"), rec);
  REQUIRE(rec->wait_done());
  CHECK(rec->error == "");
  CHECK(rec->head.status == 429);
  CHECK(llmx::http::header(rec->head, "retry-after") == "7");
  CHECK(rec->body() == "{\"error\":\"rate limited\"}");
}

TEST_CASE("http connection refused gives a transport error") {
  Client client;
  auto rec = std::make_shared<Recorder>();
  client.start(get("http://127.0.0.1:" + std::to_string(closed_port()) + "/"), rec);
  REQUIRE(rec->wait_done());
  std::lock_guard lk(rec->mu);
  CHECK(rec->dones == 1);
  CHECK(rec->heads == 0);
  CHECK_FALSE(rec->error.empty());
  CHECK(rec->error != "cancelled");
  CHECK(rec->error.find("(curl 7)") != std::string::npos);
  MESSAGE("refused: " << rec->error);
}

TEST_CASE("http malformed URL fails through on_done, not an exception") {
  Client client;
  auto rec = std::make_shared<Recorder>();
  client.start(get("nota://url"), rec);
  REQUIRE(rec->wait_done());
  std::lock_guard lk(rec->mu);
  CHECK(rec->dones == 1);
  CHECK_FALSE(rec->error.empty());
  MESSAGE("malformed: " << rec->error);
}

TEST_CASE("http server closing mid-body gives a transport error") {
  TestServer srv([](httplib::Server& s) {
    s.Get("/cut", [](const httplib::Request&, httplib::Response& res) {
      // Promise 1000 bytes, send 5, then give up: httplib closes the connection.
      res.set_content_provider(1000, "text/plain", [](size_t, size_t, httplib::DataSink& sink) {
        sink.write("hello", 5);
        return false;
      });
    });
  });
  Client client;
  auto rec = std::make_shared<Recorder>();
  client.start(get(srv.url("/cut")), rec);
  REQUIRE(rec->wait_done());
  std::lock_guard lk(rec->mu);
  CHECK(rec->dones == 1);
  CHECK_FALSE(rec->error.empty());
  CHECK(rec->error != "cancelled");
  MESSAGE("cut: " << rec->error);
}

TEST_CASE("http cancel of a hanging request: one on_done, loop keeps serving") {
  Gate release;
  TestServer srv([&](httplib::Server& s) {
    s.Get("/hang", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
        sink.write("x", 1);
        release.wait();  // hold the stream open until the test is over
        return false;
      });
    });
    s.Get("/silent", [&](const httplib::Request&, httplib::Response& res) {
      release.wait();  // never even sends a head
      res.set_content("late", "text/plain");
    });
    s.Get("/ok", [](const httplib::Request&, httplib::Response& res) { res.set_content("fine", "text/plain"); });
  });
  ReleaseOnExit unblock{release};

  Client client;
  auto rec = std::make_shared<Recorder>();
  auto id = client.start(get(srv.url("/hang")), rec);
  REQUIRE(rec->wait_for([&] { return !rec->chunks.empty(); }));
  CHECK(client.active() == 1);
  client.cancel(id);
  REQUIRE(rec->wait_done());
  CHECK(rec->error == "cancelled");
  client.cancel(id);  // already done: no effect

  // Cancel before any response head.
  auto rec2 = std::make_shared<Recorder>();
  auto id2 = client.start(get(srv.url("/silent")), rec2);
  client.cancel(id2);
  REQUIRE(rec2->wait_done());
  CHECK(rec2->error == "cancelled");
  CHECK(rec2->heads == 0);

  auto rec3 = std::make_shared<Recorder>();
  client.start(get(srv.url("/ok")), rec3);
  REQUIRE(rec3->wait_done());
  CHECK(rec3->error == "");
  CHECK(rec3->body() == "fine");

  // The loop has run since the cancels: a second on_done would have arrived by now.
  std::lock_guard lk(rec->mu);
  CHECK(rec->dones == 1);
  CHECK(rec2->dones == 1);
  CHECK(client.active() == 0);
}

namespace {

// Lets the server go on, then checks the request ended as cancelled after `chunks` body chunks,
// with exactly one on_done.
void check_cancelled_after(const std::shared_ptr<Recorder>& rec, Gate& go, size_t chunks) {
  go.release();
  REQUIRE(rec->wait_done());
  std::lock_guard lk(rec->mu);
  CHECK(rec->error == "cancelled");
  CHECK(rec->chunks.size() == chunks);
  CHECK(rec->dones == 1);
}

}  // namespace

TEST_CASE("http cancel or throw from inside on_body stops further callbacks") {
  Gate go;
  TestServer srv([&](httplib::Server& s) {
    s.Get("/many", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
        if (!go.wait()) return false;
        for (int i = 0; i < 200; ++i) {
          if (!sink.write("chunk", 5)) return false;
          std::this_thread::sleep_for(1ms);
        }
        sink.done();
        return true;
      });
    });
  });
  Client client;

  SUBCASE("cancel") {
    auto rec = std::make_shared<Recorder>();
    std::atomic<llmx::http::RequestId> id{0};
    rec->body_hook = [&](std::string_view) { client.cancel(id.load()); };
    id = client.start(get(srv.url("/many")), rec);
    check_cancelled_after(rec, go, 1);
  }
  SUBCASE("throw in on_head") {
    auto rec = std::make_shared<Recorder>();
    rec->head_hook = [] { throw 42; };
    client.start(get(srv.url("/many")), rec);
    check_cancelled_after(rec, go, 0);
  }
  SUBCASE("throw") {
    auto rec = std::make_shared<Recorder>();
    rec->body_hook = [](std::string_view) { throw std::runtime_error("handler bug"); };
    client.start(get(srv.url("/many")), rec);
    check_cancelled_after(rec, go, 1);
  }
  CHECK(client.active() == 0);
}

TEST_CASE("http 200 concurrent requests from several threads all complete") {
  TestServer srv(
      [](httplib::Server& s) {
        s.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
          res.set_content("re:" + req.body, "text/plain");
        });
      },
      256);
  Client client;
  constexpr int kThreads = 4, kPer = 50;
  std::vector<std::shared_ptr<Recorder>> recs(kThreads * kPer);
  for (auto& r : recs) r = std::make_shared<Recorder>();
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t)
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) {
        client.start(post(srv.url("/echo"), std::to_string(t * kPer + i)), recs[t * kPer + i]);
      }
    });
  for (auto& th : submitters) th.join();
  int ok = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    REQUIRE(recs[i]->wait_done());
    if (recs[i]->error.empty() && recs[i]->head.status == 200 &&
        recs[i]->body() == "re:" + std::to_string(i))
      ++ok;
    else
      MESSAGE("request " << i << " failed: " << recs[i]->error);
  }
  CHECK(ok == kThreads * kPer);
  CHECK(client.active() == 0);
}

namespace {

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

}  // namespace

TEST_CASE("http bounded connection pool queues requests and reuses connections") {
  PortLog connections;
  TestServer srv([&](httplib::Server& s) {
    s.set_keep_alive_max_count(1000);
    s.Get("/p", [&](const httplib::Request& req, httplib::Response& res) {
      connections.saw(req);
      res.set_content("p", "text/plain");
    });
  });
  Client::Options opts;
  opts.max_connections = 2;
  Client client(opts);
  std::vector<std::shared_ptr<Recorder>> recs(40);
  for (auto& r : recs) {
    r = std::make_shared<Recorder>();
    client.start(get(srv.url("/p")), r);
  }
  for (auto& r : recs) {
    REQUIRE(r->wait_done());
    CHECK(r->error == "");
    CHECK(r->body() == "p");
  }
  CHECK(connections.count() <= 2);
}

TEST_CASE("http finish_within lets a transfer end by itself, else cancels it after the grace") {
  Gate release;
  Gate body_end;  // the server finishes /slow-end's body once the test opens this
  PortLog connections;
  TestServer srv([&](httplib::Server& s) {
    s.set_keep_alive_max_count(1000);
    s.Get("/slow-end", [&](const httplib::Request& req, httplib::Response& res) {
      connections.saw(req);
      res.set_chunked_content_provider("text/plain", [&](size_t offset, httplib::DataSink& sink) {
        if (offset > 0) {
          body_end.wait();
          sink.done();  // the terminal chunk, a moment after the content the caller wanted
          return true;
        }
        sink.write("all you need", 12);
        return true;
      });
    });
    s.Get("/never-ends", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
        sink.write("x", 1);
        release.wait();
        return false;
      });
    });
  });
  ReleaseOnExit unblock{release};
  ReleaseOnExit unblock_end{body_end};

  Client client;
  // Told to finish while the body's end is still due: it ends by itself, cleanly, and the next
  // request reuses its connection.
  auto rec = std::make_shared<Recorder>();
  auto id = client.start(get(srv.url("/slow-end")), rec);
  REQUIRE(rec->wait_for([&] { return !rec->chunks.empty(); }));
  client.finish_within(id, 5s);
  std::this_thread::sleep_for(50ms);
  body_end.release();
  REQUIRE(rec->wait_done());
  CHECK(rec->error == "");
  auto again = std::make_shared<Recorder>();
  client.start(get(srv.url("/slow-end")), again);
  REQUIRE(again->wait_done());
  CHECK(connections.count() == 1);

  // A stream that never ends is cancelled once the grace has passed.
  auto stuck = std::make_shared<Recorder>();
  auto stuck_id = client.start(get(srv.url("/never-ends")), stuck);
  REQUIRE(stuck->wait_for([&] { return !stuck->chunks.empty(); }));
  auto t0 = std::chrono::steady_clock::now();
  client.finish_within(stuck_id, 150ms);
  REQUIRE(stuck->wait_done());
  auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(stuck->error == "cancelled");
  CHECK(waited >= 140ms);
  CHECK(waited < 2s);
}

TEST_CASE("http destructor with in-flight requests cancels them and returns promptly") {
  Gate release;
  TestServer srv(
      [&](httplib::Server& s) {
        s.Get("/hang", [&](const httplib::Request&, httplib::Response& res) {
          res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
            sink.write("x", 1);
            release.wait();
            return false;
          });
        });
      },
      32);
  ReleaseOnExit unblock{release};

  std::vector<std::shared_ptr<Recorder>> recs(20);
  auto client = std::make_unique<Client>();
  for (auto& r : recs) {
    r = std::make_shared<Recorder>();
    client->start(get(srv.url("/hang")), r);
  }
  for (auto& r : recs) REQUIRE(r->wait_head());
  // A few that are still queued or connecting when the destructor runs.
  std::vector<std::shared_ptr<Recorder>> late(5);
  for (auto& r : late) {
    r = std::make_shared<Recorder>();
    client->start(get(srv.url("/hang")), r);
  }
  auto t0 = std::chrono::steady_clock::now();
  client.reset();
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took < 2s);
  MESSAGE("destructor took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                             << " ms");
  for (auto& r : recs) {
    std::lock_guard lk(r->mu);
    CHECK(r->dones == 1);
    CHECK(r->error == "cancelled");
  }
  for (auto& r : late) {
    std::lock_guard lk(r->mu);
    CHECK(r->dones == 1);
  }
}

TEST_CASE("http shared client is one instance") {
  CHECK(&Client::shared() == &Client::shared());
}
