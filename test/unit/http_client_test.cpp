// The streaming HTTP client: what a response looks like to its handler, and how failures end.
#include <doctest/doctest.h>

#include "test/unit/http_test_support.hpp"

using namespace http_test;

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
