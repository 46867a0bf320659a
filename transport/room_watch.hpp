// Waits, on a thread of its own, until a non-blocking pipe or socket takes writes again.
//
// The stdout writer runs on the actors' worker threads and never blocks. When the client's pipe
// is full it used to come back after a fixed millisecond (a timer: two wake-ups of CAF's clock
// thread and one of a worker each time), and a client that read faster than that found the
// pipe empty most of the millisecond while the backlog grew. Armed instead, this thread sleeps
// in poll() until the reader has made room (or `stall` passes, so the writer can notice a reader
// that stopped) and runs the callback once.
//
// Plain code, not an actor: the callback does the messaging.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace llmx {

class RoomWatch {
 public:
  // `on_room` runs on the watch's thread, once per arm().
  RoomWatch(int fd, std::chrono::milliseconds stall, std::function<void()> on_room);
  ~RoomWatch();  // stops the thread (at once, even while it waits) and joins it
  RoomWatch(const RoomWatch&) = delete;
  RoomWatch& operator=(const RoomWatch&) = delete;

  // Runs `on_room` once `fd` is writable, or has an error, or after `stall`. One arm at a time:
  // the caller arms again only after the callback ran.
  void arm();

  // Whether the thread and its wake-up descriptor started (false only when the system is out
  // of threads or descriptors; the caller then falls back to polling).
  bool running() const { return wake_ >= 0 && thread_.joinable(); }

 private:
  void loop();

  const int fd_;
  const std::chrono::milliseconds stall_;
  const std::function<void()> on_room_;
  int wake_ = -1;  // eventfd: an arm or the stop
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace llmx
