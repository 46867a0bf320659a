// The HTTP loop's waiting: curl's socket API over one epoll set. curl names the sockets it wants
// watched and when it wants to be called back; a round then hands curl only the sockets that are
// ready. (curl_multi_perform visits every transfer and checks each socket with a poll of its own:
// with 100 streams open, 100 system calls a round.)
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <optional>

namespace llmx::http {

class CurlSockets {
 public:
  // Installs the socket and timer callbacks on `multi`, which must outlive this.
  explicit CurlSockets(CURLM* multi);
  ~CurlSockets();
  CurlSockets(const CurlSockets&) = delete;
  CurlSockets& operator=(const CurlSockets&) = delete;

  // Waits until a socket is ready, curl's timer is due, `limit_ms` has passed or wake() was
  // called; then lets curl act on the ready sockets and on its timer.
  void wait_and_act(int limit_ms);

  // Waits until wake() is called or `limit` has passed, whatever the sockets do: the loop's gather.
  // True when a wake ended it.
  bool wait_for_wake(std::chrono::microseconds limit);

  // Ends the current (or the next) wait; any thread. A wake stands, ending every wait, until
  // take_wakes(): the loop calls it as it takes the work the wakes announced.
  void wake();
  void take_wakes();

 private:
  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socket_data);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  void act(curl_socket_t fd, int bits);

  CURLM* multi_;
  int epoll_ = -1;
  int event_ = -1;  // eventfd: wake()
  std::optional<std::chrono::steady_clock::time_point> due_;  // curl's timer
};

}  // namespace llmx::http
