#include "transport/stdio.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace llmx {

uint64_t max_line_bytes() {
  if (const char* v = std::getenv("LLMX_MAX_LINE_BYTES"); v && *v) {
    char* end = nullptr;
    auto n = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && n > 0) return n;
  }
  return kDefaultMaxLineBytes;
}

void spawn_stdio_reader(caf::actor_system& sys, session_actor session, int fd) {
  sys.spawn<caf::detached + caf::hidden>([session, fd](caf::blocking_actor* self) {
    const uint64_t limit = max_line_bytes();
    std::string line;
    bool discarding = false;  // inside a line that exceeded the limit
    std::string buf(64 * 1024, '\0');
    auto emit = [&](std::string& l) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      self->send(session, line_atom::value, std::move(l));
      l = std::string();
    };
    while (true) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::string_view chunk(buf.data(), static_cast<size_t>(n));
      while (!chunk.empty()) {
        auto nl = chunk.find('\n');
        auto piece = chunk.substr(0, nl);
        if (!discarding) {
          if (line.size() + piece.size() > limit) {
            discarding = true;
            line.clear();
            line.shrink_to_fit();
          } else {
            line.append(piece);
          }
        }
        if (nl == std::string_view::npos) break;
        if (discarding) {
          self->send(session, oversize_atom::value, limit);
          discarding = false;
        } else if (!line.empty()) {
          emit(line);
        }
        chunk.remove_prefix(nl + 1);
      }
    }
    if (discarding)
      self->send(session, oversize_atom::value, limit);
    else if (!line.empty())
      emit(line);
    self->send(session, eof_atom::value);
  });
}

namespace {

struct WriterState {
  WriterState() = default;
  int fd = 1;
  std::string buffer;
  bool flush_pending = false;
  bool broken = false;  // the reader of our stdout went away
  static inline const char* name = "llmx.stdio_writer";
};

void write_all(WriterState& st) {
  size_t off = 0;
  while (off < st.buffer.size() && !st.broken) {
    ssize_t n = ::write(st.fd, st.buffer.data() + off, st.buffer.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      st.broken = true;
      break;
    }
    off += static_cast<size_t>(n);
  }
  st.buffer.clear();
}

line_writer_actor::behavior_type writer_impl(line_writer_actor::stateful_pointer<WriterState> self, int fd) {
  self->state.fd = fd;
  return {
      [=](line_atom, std::string& line) {
        auto& st = self->state;
        st.buffer.append(line);
        st.buffer.push_back('\n');
        // Lines already queued behind this one are appended before the flush arrives.
        if (!st.flush_pending) {
          st.flush_pending = true;
          self->send(self, flush_atom::value);
        }
        if (st.buffer.size() > (1u << 20)) write_all(st);
      },
      [=](flush_atom) {
        self->state.flush_pending = false;
        write_all(self->state);
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
