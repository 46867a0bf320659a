#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "transport/room_watch.hpp"

using llmx::RoomWatch;
using namespace std::chrono_literals;

namespace {

// A non-blocking pipe, as the stdout writer makes it.
struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    r = fds[0];
    w = fds[1];
    REQUIRE(::fcntl(w, F_SETFL, ::fcntl(w, F_GETFL) | O_NONBLOCK) == 0);
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  void fill() {
    std::string block(4096, 'x');
    while (::write(w, block.data(), block.size()) > 0) {
    }
    REQUIRE(errno == EAGAIN);
  }
  void drain() {
    REQUIRE(::fcntl(r, F_SETFL, ::fcntl(r, F_GETFL) | O_NONBLOCK) == 0);
    char buf[65536];
    while (::read(r, buf, sizeof buf) > 0) {
    }
  }
};

// Counts the callbacks; waits for the next one with a generous deadline (a loaded machine).
struct Calls {
  std::mutex mu;
  std::condition_variable cv;
  int n = 0;
  void operator()() {
    std::lock_guard lock(mu);
    ++n;
    cv.notify_all();
  }
  bool wait_for(int count, std::chrono::milliseconds within = 10s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, within, [&] { return n >= count; });
  }
  int seen() {
    std::lock_guard lock(mu);
    return n;
  }
};

// A full pipe, and a watch armed on it.
struct FullPipeWatch {
  Pipe p;
  Calls calls;
  std::optional<RoomWatch> watch;  // declared last: gone before what its callback uses
  explicit FullPipeWatch(std::chrono::milliseconds stall) {
    p.fill();
    watch.emplace(p.w, stall, [this] { calls(); });
    watch->arm();
  }
};

}  // namespace

TEST_CASE("room watch: a pipe with room calls back at once, once per arm") {
  Pipe p;
  Calls calls;
  RoomWatch watch(p.w, 1h, [&] { calls(); });
  REQUIRE(watch.running());
  watch.arm();
  CHECK(calls.wait_for(1));
  watch.arm();
  CHECK(calls.wait_for(2));
  std::this_thread::sleep_for(20ms);
  CHECK(calls.seen() == 2);  // no arm, no call
}

TEST_CASE("room watch: a full pipe calls back only once the reader has made room") {
  FullPipeWatch f(1h);
  CHECK_FALSE(f.calls.wait_for(1, 100ms));  // nobody read: the watch waits (its stall is an hour)
  f.p.drain();
  CHECK(f.calls.wait_for(1));
}

TEST_CASE("room watch: a reader that stays silent is reported after the stall") {
  FullPipeWatch f(30ms);
  CHECK(f.calls.wait_for(1));  // no room: the writer looks again anyway and can give up
}

TEST_CASE("room watch: a closed read end calls back (the writer's next write sees it)") {
  FullPipeWatch f(1h);
  ::close(f.p.r);
  f.p.r = -1;
  CHECK(f.calls.wait_for(1));
}

TEST_CASE("room watch: destroyed while it waits, it stops at once") {
  FullPipeWatch f(1h);
  std::this_thread::sleep_for(20ms);  // let it reach poll()
  f.watch.reset();  // joins: with an hour's stall this only returns if the stop wakes it
  CHECK(f.calls.seen() == 0);
  RoomWatch idle(f.p.w, 1h, [&] { f.calls(); });  // never armed: stops from its idle wait too
}
