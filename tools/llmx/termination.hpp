// SIGTERM, SIGINT and SIGHUP (an editor closing, systemd stopping, Ctrl-C) end llmx cleanly:
// the first one runs a callback that stops the engine (running commands killed, turns aborted,
// rollouts written); a second one exits at once.
#pragma once

#include <functional>
#include <memory>

namespace llmx::cli {

class TerminationSignals {
 public:
  // Blocks the three signals in the calling thread, so every thread started after this inherits
  // the block and only the watcher sees them. Construct it before the actor system.
  TerminationSignals();
  ~TerminationSignals();  // stops the watcher; the callback is never called after this
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  // Called once, on the watcher thread, with the first signal; keep it short (a message send). A
  // first signal that came while no callback was set reaches the next one set, at once.
  // Replacing it (nullptr to clear) waits for a call in progress.
  void on_signal(std::function<void(int)> callback);
  int received() const;  // the first signal, 0 before any

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmx::cli
