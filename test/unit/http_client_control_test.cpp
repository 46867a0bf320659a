// The streaming HTTP client: pausing, cancelling, letting a transfer finish, and shutting down.
#include <doctest/doctest.h>

#include <atomic>

#include "test/unit/http_test_support.hpp"

using namespace http_test;

TEST_CASE("http a paused transfer delivers nothing until it reads on, then everything in order") {
  auto rec = std::make_shared<Recorder>();
  Gate paused, served;
  ReleaseOnExit release{paused};
  TestServer srv([&](httplib::Server& s) {
    s.Get("/stream", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
        paused.wait();  // the body is written only once the loop has taken the pause
        if (!sink.write("data: one\n\n", 11) || !sink.write("data: two\n\n", 11)) return false;
        served.release();
        sink.done();
        return true;
      });
    });
    s.Get("/probe", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  });
  Client client;
  auto id = client.start(get(srv.url("/stream")), rec);
  client.pause(id, true);
  // The loop takes its work in order: once a request started after the pause has ended, the
  // pause is in force (before, the body could come first when this thread was slow to ask).
  auto probe = std::make_shared<Recorder>();
  client.start(get(srv.url("/probe")), probe);
  REQUIRE(probe->wait_done());
  paused.release();
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

TEST_CASE("http a handler's hold stops reading after its chunk until released, whatever pause says") {
  struct Holder : Recorder {
    std::atomic<bool> holding{true};
    bool hold() override { return holding.load(); }
  };
  auto rec = std::make_shared<Holder>();
  Gate first_read, second_written;
  ReleaseOnExit release1{first_read}, release2{second_written};
  rec->body_hook = [&](std::string_view) { first_read.release(); };
  TestServer srv([&](httplib::Server& s) {
    s.Get("/stream", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
        if (!sink.write("data: one\n\n", 11)) return false;
        first_read.wait();  // the second chunk comes in its own read
        if (!sink.write("data: two\n\n", 11)) return false;
        second_written.release();
        sink.done();
        return true;
      });
    });
  });
  Client client;
  auto id = client.start(get(srv.url("/stream")), rec);
  REQUIRE(second_written.wait());
  client.pause(id, true);
  client.pause(id, false);  // reading on from a pause does not end the hold
  std::this_thread::sleep_for(300ms);
  {
    std::lock_guard lk(rec->mu);
    CHECK(rec->chunks.size() == 1);
    CHECK(rec->dones == 0);
  }
  rec->holding = false;
  client.release(id);
  REQUIRE(rec->wait_done());
  CHECK(rec->error == "");
  CHECK(rec->body() == "data: one\n\ndata: two\n\n");
  client.release(id);  // an ended transfer: ignored
  CHECK(client.active() == 0);
}

namespace {
// GET /drip: `pieces` SSE events of 9 bytes, `every` apart, each its own HTTP chunk.
void serve_drip(httplib::Server& s, int pieces, std::chrono::milliseconds every) {
  s.Get("/drip", [pieces, every](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [pieces, every](size_t, httplib::DataSink& sink) {
      for (int i = 0; i < pieces; ++i) {
        if (!sink.write("data: x\n\n", 9)) return false;
        std::this_thread::sleep_for(every);
      }
      sink.done();
      return true;
    });
  });
}
}  // namespace

// A stream of small pieces (a model's deltas) is handed over a round of the loop at a time: with
// a gather of 100 ms, 20 pieces 5 ms apart arrive in a few chunks; without one, in many.
TEST_CASE("http the loop gathers what arrives during its wait into one chunk per round") {
  TestServer srv([&](httplib::Server& s) { serve_drip(s, 20, 5ms); });
  auto chunks_with = [&](std::chrono::microseconds gather) {
    Client::Options opts;
    opts.gather = gather;
    Client client(opts);
    auto rec = std::make_shared<Recorder>();
    client.start(get(srv.url("/drip")), rec);
    REQUIRE(rec->wait_done());
    std::lock_guard lk(rec->mu);
    CHECK(rec->error == "");
    std::string body;
    for (auto& c : rec->chunks) body += c;
    CHECK(body.size() == 20 * 9);  // every byte, in order, whatever the rounds
    return rec->chunks.size();
  };
  const auto gathered = chunks_with(100ms), single = chunks_with(1us);
  MESSAGE("chunks with a 100 ms gather: " << gathered << ", with 1 us: " << single);
  CHECK(gathered <= 4);
  CHECK(single > gathered);
}

// Only the streams' bytes gather: a request started while the loop waits is not held for it.
TEST_CASE("http a request started during the gather goes out at once") {
  TestServer srv([&](httplib::Server& s) {
    serve_drip(s, 40, 50ms);
    s.Get("/quick", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  });
  Client::Options opts;
  opts.gather = 1s;  // a delivering round is followed by a long wait
  Client client(opts);
  auto drip = std::make_shared<Recorder>();
  auto quick = std::make_shared<Recorder>();
  std::atomic<bool> started{false};
  std::chrono::steady_clock::time_point t0;
  // From the handler, i.e. just before the loop's wait after the first delivering round.
  drip->body_hook = [&](std::string_view) {
    if (started.exchange(true)) return;
    t0 = std::chrono::steady_clock::now();
    client.start(get(srv.url("/quick")), quick);
  };
  auto drip_id = client.start(get(srv.url("/drip")), drip);
  REQUIRE(quick->wait_done());
  const auto took = std::chrono::steady_clock::now() - t0;
  MESSAGE("the request in the gather took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                                            << " ms");
  CHECK(took < 500ms);
  CHECK(quick->body() == "ok");
  {
    std::lock_guard lk(quick->mu);
    CHECK(quick->error == "");
  }
  client.cancel(drip_id);
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
