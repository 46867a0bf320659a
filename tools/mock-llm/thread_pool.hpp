// Elastic task queue for httplib. httplib runs each *connection* (not request) as one task for
// its whole keep-alive life, and `hang` streams hold a thread for minutes, so a fixed pool would
// stall new connections behind idle ones. This pool starts a thread whenever no idle worker is
// free (up to a cap) and lets idle workers exit after a while.
#pragma once

#include "tools/mock-llm/http.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace mockllm {

class ElasticPool final : public httplib::TaskQueue {
public:
  explicit ElasticPool(size_t max_threads) : s_(std::make_shared<Shared>()) {
    s_->max_threads = max_threads;
  }
  ~ElasticPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock lock(s_->mu);
    s_->jobs.push_back(std::move(fn));
    // Every queued job needs its own idle worker; otherwise grow (until the cap).
    if (s_->jobs.size() > s_->idle && s_->threads < s_->max_threads) {
      ++s_->threads;
      try {
        // Workers own the shared state, so they may outlive this object (httplib deletes the
        // queue when listen() returns while connections can still be draining).
        std::thread([s = s_] { work(s); }).detach();
        return;
      } catch (const std::system_error &) {
        --s_->threads; // out of threads: the job waits for a busy worker instead
      }
    }
    s_->cv.notify_one();
  }

  void shutdown() override {
    std::lock_guard lock(s_->mu);
    s_->stopping = true;
    s_->cv.notify_all();
  }

private:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    size_t idle = 0, threads = 0, max_threads = 0;
    bool stopping = false;
  };

  static void work(std::shared_ptr<Shared> s) {
    std::unique_lock lock(s->mu);
    for (;;) {
      ++s->idle;
      const bool woke = s->cv.wait_for(lock, std::chrono::seconds(30),
                                       [&] { return s->stopping || !s->jobs.empty(); });
      --s->idle;
      if (s->jobs.empty() && (!woke || s->stopping)) {
        --s->threads;
        return;
      }
      auto job = std::move(s->jobs.front());
      s->jobs.pop_front();
      lock.unlock();
      job();
      job = nullptr; // release captures outside the lock
      lock.lock();
    }
  }

  std::shared_ptr<Shared> s_;
};

} // namespace mockllm
