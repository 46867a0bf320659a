#include "actors/stdio_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "protocol/base/line_cutter.hpp"
#include "protocol/base/log.hpp"

namespace llmx {

namespace {
uint64_t env_bytes(const char* name, uint64_t fallback) {
  if (const char* v = std::getenv(name); v && *v) {
    char* end = nullptr;
    auto n = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && n > 0) return n;
  }
  return fallback;
}
}  // namespace

uint64_t max_output_bytes() { return env_bytes("LLMX_MAX_OUTPUT_BYTES", kDefaultMaxOutputBytes); }

uint64_t max_line_bytes() { return env_bytes("LLMX_MAX_LINE_BYTES", kDefaultMaxLineBytes); }

void spawn_stdio_reader(caf::actor_system& sys, session_actor session, int fd) {
  sys.spawn<caf::detached + caf::hidden>([session, fd](caf::blocking_actor* self) {
    const uint64_t limit = max_line_bytes();
    LineCutter lines(limit);
    auto on_line = [&](std::string& l) {
      if (!l.empty()) self->send(session, line_atom::value, std::move(l));
    };
    auto on_oversized = [&] { self->send(session, oversize_atom::value, limit); };
    std::string buf(64 * 1024, '\0');
    while (true) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      lines.feed(std::string_view(buf.data(), static_cast<size_t>(n)), on_line, on_oversized);
    }
    lines.finish(on_line, on_oversized);
    self->send(session, eof_atom::value);
  });
}

namespace {

struct WriterState {
  WriterState() = default;
  int fd = 1;
  std::string buffer;
  size_t offset = 0;           // bytes of `buffer` already written
  bool flush_pending = false;
  bool nonblocking = false;    // a pipe or socket we made non-blocking: a stalled reader cannot block us
  bool broken = false;         // the reader of our stdout went away, or stopped reading for too long
  uint64_t limit = kDefaultMaxOutputBytes;
  static inline const char* name = "llmx.stdio_writer";
};

using writer_ptr = line_writer_actor::stateful_pointer<WriterState>;

// Writes what the reader takes now. Returns false when bytes are left (the reader is slow).
bool write_some(WriterState& st) {
  while (st.offset < st.buffer.size() && !st.broken) {
    ssize_t n = ::write(st.fd, st.buffer.data() + st.offset, st.buffer.size() - st.offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // retried by a timer
    if (n <= 0) {
      st.broken = true;
      break;
    }
    st.offset += static_cast<size_t>(n);
  }
  if (st.broken || st.offset == st.buffer.size()) {
    st.buffer.clear();
    st.offset = 0;
    return true;
  }
  if (st.offset > (1u << 20)) {  // keep the unwritten tail only
    st.buffer.erase(0, st.offset);
    st.offset = 0;
  }
  return false;
}

// Everything queued, blocking as long as it takes (shutdown).
void write_all(WriterState& st) {
  while (!write_some(st)) {
    pollfd p{st.fd, POLLOUT, 0};
    if (::poll(&p, 1, 1000) <= 0 && !(p.revents & POLLOUT)) {
      st.broken = true;
      st.buffer.clear();
      st.offset = 0;
    }
  }
}

// Once the client cannot read what we write (its end closed, or the output cap reached), the
// writer ends: the session monitors it, and interrupts its turns and ends as at end of input,
// instead of streaming on into nothing until stdin closes.
void flush(writer_ptr self) {
  auto& st = self->state;
  while (!write_some(st)) {
    // The client is not keeping up. Memory stays bounded: past the limit its output is dropped
    // and stdout is closed, which the client sees as end of stream (and we say why on stderr).
    if (st.buffer.size() - st.offset > st.limit) {
      log::error("stdout: the client stopped reading; {} bytes of output are queued (limit {}, "
                 "LLMX_MAX_OUTPUT_BYTES). Closing stdout and ending the session.",
                 st.buffer.size() - st.offset, st.limit);
      st.broken = true;
      st.buffer.clear();
      st.buffer.shrink_to_fit();
      st.offset = 0;
      ::close(st.fd);
      return self->quit(caf::exit_reason::user_shutdown);  // the session sees us go (see below)
    }
    // Wait briefly for room; meanwhile queued lines are taken from the mailbox (and counted
    // against the limit) before the next attempt.
    pollfd p{st.fd, POLLOUT, 0};
    if (::poll(&p, 1, 10) <= 0) {
      if (!st.flush_pending) {
        st.flush_pending = true;
        self->send(self, flush_atom::value);
      }
      return;
    }
  }
  if (st.broken) {
    log::error("stdout: the client closed it; ending the session.");
    self->quit(caf::exit_reason::user_shutdown);
  }
}

line_writer_actor::behavior_type writer_impl(writer_ptr self, int fd) {
  auto& st0 = self->state;
  st0.fd = fd;
  st0.limit = max_output_bytes();
  struct stat sb {};
  if (::fstat(fd, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))) {
    int flags = ::fcntl(fd, F_GETFL);
    st0.nonblocking = flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
  }
  return {
      [=](line_atom, std::string& line) {
        auto& st = self->state;
        if (st.broken) return;
        st.buffer.append(line);
        st.buffer.push_back('\n');
        // Lines already queued behind this one are appended before the flush arrives.
        if (!st.flush_pending) {
          st.flush_pending = true;
          self->send(self, flush_atom::value);
        }
      },
      [=](flush_atom) {
        self->state.flush_pending = false;
        flush(self);
      },
      [=](shutdown_atom) -> bool {
        write_all(self->state);
        self->quit();
        return true;
      },
  };
}

}  // namespace

line_writer_actor spawn_line_writer(caf::actor_system& sys, int fd) {
  return sys.spawn<caf::detached>(writer_impl, fd);
}

}  // namespace llmx
