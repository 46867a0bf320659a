#include "transport/curl_sockets.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "transport/curl_api.hpp"

namespace llmx::http {

CurlSockets::CurlSockets(CURLM* multi) : multi_(multi) {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  event_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_ < 0 || event_ < 0) throw std::runtime_error("the HTTP loop could not create its epoll set");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = event_;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, event_, &ev);
  curl_api().multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlSockets::on_socket);
  curl_api().multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_api().multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlSockets::on_timer);
  curl_api().multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

CurlSockets::~CurlSockets() {
  ::close(event_);
  ::close(epoll_);
}

int CurlSockets::on_socket(CURL*, curl_socket_t fd, int what, void* self, void*) {
  auto* s = static_cast<CurlSockets*>(self);
  if (what == CURL_POLL_REMOVE) {
    ::epoll_ctl(s->epoll_, EPOLL_CTL_DEL, fd, nullptr);  // may be closed already: then it is gone
    return 0;
  }
  epoll_event ev{};
  ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  ev.data.fd = fd;
  if (::epoll_ctl(s->epoll_, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
    ::epoll_ctl(s->epoll_, EPOLL_CTL_ADD, fd, &ev);
  return 0;
}

int CurlSockets::on_timer(CURLM*, long timeout_ms, void* self) {
  auto* s = static_cast<CurlSockets*>(self);
  if (timeout_ms < 0)
    s->due_.reset();
  else
    s->due_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  return 0;
}

void CurlSockets::act(curl_socket_t fd, int bits) {
  int running = 0;
  curl_api().multi_socket_action(multi_, fd, bits, &running);
}

void CurlSockets::wait_and_act(int limit_ms) {
  int wait = limit_ms;
  if (due_) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*due_ - std::chrono::steady_clock::now()).count();
    wait = static_cast<int>(std::clamp<int64_t>(left, 0, limit_ms));
  }
  epoll_event events[64];
  int n = ::epoll_wait(epoll_, events, 64, wait);
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == event_) continue;  // work for the loop: it takes the wake with the work
    const uint32_t e = events[i].events;
    int bits = 0;
    if (e & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) bits |= CURL_CSELECT_IN;
    if (e & EPOLLOUT) bits |= CURL_CSELECT_OUT;
    if (e & EPOLLERR) bits |= CURL_CSELECT_ERR;
    act(fd, bits);
  }
  if (due_ && *due_ <= std::chrono::steady_clock::now()) {
    due_.reset();  // curl may set it again from inside the action
    act(CURL_SOCKET_TIMEOUT, 0);
  }
}

bool CurlSockets::wait_for_wake(std::chrono::microseconds limit) {
  if (limit.count() <= 0) return false;
  pollfd p{event_, POLLIN, 0};
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(limit);
  const timespec ts{static_cast<time_t>(secs.count()),
                    static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(limit - secs).count())};
  return ::ppoll(&p, 1, &ts, nullptr) > 0;
}

void CurlSockets::take_wakes() {
  uint64_t count = 0;
  (void)!::read(event_, &count, sizeof count);
}

void CurlSockets::wake() {
  const uint64_t one = 1;
  (void)!::write(event_, &one, sizeof one);
}

}  // namespace llmx::http
