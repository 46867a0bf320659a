#include "transport/room_watch.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace llmx {
namespace {

// Takes what the eventfd counted (arms and the stop); false once it cannot be read.
bool take(int efd) {
  uint64_t n = 0;
  while (::read(efd, &n, sizeof n) < 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

void give(int efd) {
  const uint64_t one = 1;
  while (::write(efd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace

RoomWatch::RoomWatch(int fd, std::chrono::milliseconds stall, std::function<void()> on_room)
    : fd_(fd), stall_(stall), on_room_(std::move(on_room)) {
  wake_ = ::eventfd(0, EFD_CLOEXEC);  // blocking: the idle thread sleeps in read()
  if (wake_ < 0) return;
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (const std::system_error&) {
    ::close(wake_);
    wake_ = -1;
  }
}

RoomWatch::~RoomWatch() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    give(wake_);
    thread_.join();
  }
  if (wake_ >= 0) ::close(wake_);
}

void RoomWatch::arm() { give(wake_); }

void RoomWatch::loop() {
  while (take(wake_) && !stop_.load(std::memory_order_acquire)) {
    pollfd p[2] = {{fd_, POLLOUT, 0}, {wake_, POLLIN, 0}};
    int n = 0;
    do {
      n = ::poll(p, 2, static_cast<int>(stall_.count()));
    } while (n < 0 && errno == EINTR);
    if (stop_.load(std::memory_order_acquire)) return;
    // Room, an error on the descriptor (the writer's next write says which), or the stall: the
    // writer looks again either way. An eventfd readable here can only be the stop (one arm at a
    // time), checked above.
    on_room_();
  }
}

}  // namespace llmx
