// How far one model stream may run ahead of the clients that read it (issue 18, back-pressure
// at the source).
//
// The HTTP thread decodes a fast stream far quicker than the executor, the conversation and the
// session can handle its events: a pause sent back by message arrives after the whole response
// already waits in their mailboxes. So each batch the stream delivers carries a claim, which
// travels with the events from actor to actor and comes back when its last copy is dropped (every
// local subscriber handled the batch; a remote one's copy once it was serialised). While more
// than `limit` events are out, the stream stops reading; it reads on when half of them are back.
//
// Plain code, thread-safe: claims come back on whichever thread drops them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace llmx {

class DeliveryWindow;

// Events of one batch still on their way. Copies share the batch; the last one to go hands the
// events back. Empty for batches nobody counts (remote ones, or ones not from a model stream).
class Claim {
 public:
  Claim() = default;
  explicit operator bool() const { return static_cast<bool>(stub_); }

 private:
  friend class DeliveryWindow;
  struct Stub;
  explicit Claim(std::shared_ptr<const Stub> stub) : stub_(std::move(stub)) {}
  std::shared_ptr<const Stub> stub_;
};

class DeliveryWindow : public std::enable_shared_from_this<DeliveryWindow> {
 public:
  // `reopen(token)` runs once a closed window has room again, with the token it was closed with,
  // on the thread that handed back the claim that made the room.
  static std::shared_ptr<DeliveryWindow> make(uint64_t limit, std::function<void(uint64_t token)> reopen);

  // `events` leave the source; the claim goes with them.
  Claim issue(uint64_t events);
  // Source side, after issuing: true if the source must stop until reopen(token) (the window is
  // over its limit and now closed), false if it may go on.
  bool close_if_full(uint64_t token);

  uint64_t out() const;
  bool closed() const;

 private:
  DeliveryWindow(uint64_t limit, std::function<void(uint64_t)> reopen);
  friend struct Claim::Stub;
  void hand_back(uint64_t events);

  const uint64_t limit_;
  const std::function<void(uint64_t)> reopen_;
  mutable std::mutex mu_;
  uint64_t out_ = 0;  // events issued and not yet handed back
  bool closed_ = false;
  uint64_t token_ = 0;
};

// Events a model stream may have on their way to its clients: LLMX_STREAM_WINDOW, default 64.
uint64_t stream_window_events();

}  // namespace llmx
