// The streaming HTTP client under load: concurrent requests and its bounded connection pool.
#include <doctest/doctest.h>

#include "test/unit/http_test_support.hpp"

using namespace http_test;

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
