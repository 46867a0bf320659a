#include "termination.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <utility>

namespace llmx::cli {

struct TerminationSignals::Impl {
  sigset_t set{};
  std::mutex mu;
  std::function<void(int)> callback;  // guarded by mu
  bool stopping = false;              // guarded by mu
  bool unheard = false;               // the first signal came while no callback was set (mu)
  std::atomic<int> first{0};
  std::thread watcher;
};

TerminationSignals::TerminationSignals() : impl_(std::make_unique<Impl>()) {
  sigemptyset(&impl_->set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&impl_->set, s);
  pthread_sigmask(SIG_BLOCK, &impl_->set, nullptr);
  // SIGUSR2 wakes the watcher when stopping; blocked only while the watcher is created, so the
  // watcher alone inherits that block.
  sigset_t wake, old;
  sigemptyset(&wake);
  sigaddset(&wake, SIGUSR2);
  sigaddset(&impl_->set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &wake, &old);
  impl_->watcher = std::thread([impl = impl_.get()] {
    for (;;) {
      int sig = 0;
      if (sigwait(&impl->set, &sig) != 0) continue;
      std::lock_guard lock(impl->mu);
      if (impl->stopping) return;
      if (sig == SIGUSR2) continue;
      int expected = 0;
      if (!impl->first.compare_exchange_strong(expected, sig)) _exit(128 + sig);  // the second
      if (impl->callback)
        impl->callback(sig);  // under the lock: on_signal() waits for it
      else
        impl->unheard = true;
    }
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

TerminationSignals::~TerminationSignals() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  pthread_kill(impl_->watcher.native_handle(), SIGUSR2);
  impl_->watcher.join();
}

void TerminationSignals::on_signal(std::function<void(int)> callback) {
  std::lock_guard lock(impl_->mu);
  impl_->callback = std::move(callback);
  if (impl_->callback && std::exchange(impl_->unheard, false)) impl_->callback(impl_->first.load());
}

int TerminationSignals::received() const {
  return impl_->first.load();
}

}  // namespace llmx::cli
