#include "actors/delivery_window.hpp"

#include "protocol/base/secret_env.hpp"

namespace llmx {

struct Claim::Stub {
  std::shared_ptr<DeliveryWindow> window;
  uint64_t events = 0;
  ~Stub() { window->hand_back(events); }
};

DeliveryWindow::DeliveryWindow(uint64_t limit, std::function<void(uint64_t)> reopen)
    : limit_(limit), reopen_(std::move(reopen)) {}

std::shared_ptr<DeliveryWindow> DeliveryWindow::make(uint64_t limit, std::function<void(uint64_t)> reopen) {
  return std::shared_ptr<DeliveryWindow>(new DeliveryWindow(limit, std::move(reopen)));
}

Claim DeliveryWindow::issue(uint64_t events) {
  if (events == 0) return {};
  {
    std::lock_guard lk(mu_);
    out_ += events;
  }
  auto stub = std::make_shared<Claim::Stub>();
  stub->window = shared_from_this();
  stub->events = events;
  return Claim(std::move(stub));
}

bool DeliveryWindow::close_if_full(uint64_t token) {
  std::lock_guard lk(mu_);
  if (out_ <= limit_) return false;
  closed_ = true;
  token_ = token;
  return true;
}

void DeliveryWindow::hand_back(uint64_t events) {
  uint64_t token = 0;
  {
    std::lock_guard lk(mu_);
    out_ -= events;
    // Half the limit, not the limit itself: the source gets a run of reads per reopening.
    if (!closed_ || out_ > limit_ / 2) return;
    closed_ = false;
    token = token_;
  }
  reopen_(token);  // outside the lock: it may post to another thread
}

uint64_t DeliveryWindow::out() const {
  std::lock_guard lk(mu_);
  return out_;
}

bool DeliveryWindow::closed() const {
  std::lock_guard lk(mu_);
  return closed_;
}

uint64_t stream_window_events() { return env_count("LLMX_STREAM_WINDOW", 64); }

}  // namespace llmx
