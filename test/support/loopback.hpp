// A TCP socket listening on 127.0.0.1 at a port the kernel picks: the tests' servers.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace llmx::test {

struct LoopbackListener {
  int fd = -1;
  int port = 0;
};

// Throws std::runtime_error when the socket cannot be bound or listened on.
inline LoopbackListener listen_on_loopback(int backlog) {
  LoopbackListener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (l.fd < 0 || ::bind(l.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l.fd, backlog) != 0 ||
      ::getsockname(l.fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    if (l.fd >= 0) ::close(l.fd);
    throw std::runtime_error("listen_on_loopback: " + why);
  }
  l.port = ntohs(a.sin_port);
  return l;
}

}  // namespace llmx::test
