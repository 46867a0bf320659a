#include "actors/stdio_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>

#include "protocol/base/line_cutter.hpp"
#include "protocol/base/log.hpp"
#include "protocol/base/secret_env.hpp"
#include "transport/output_queue.hpp"
#include "transport/room_watch.hpp"

namespace llmx {

uint64_t max_output_bytes() { return env_count("LLMX_MAX_OUTPUT_BYTES", kDefaultMaxOutputBytes); }

uint64_t pause_output_bytes() { return env_count("LLMX_OUTPUT_PAUSE_BYTES", kDefaultPauseOutputBytes); }

void spawn_stdio_reader(caf::actor_system& sys, session_actor session, int fd, std::string already_read) {
  sys.spawn<caf::detached + caf::hidden>([session, fd, already_read = std::move(already_read)](caf::blocking_actor* self) {
    const uint64_t limit = max_line_bytes();
    LineCutter lines(limit);
    // The client's messages go ahead of what the session has queued from its conversations (a
    // slow client's ping must not wait behind thousands of event batches); among themselves they
    // keep their order. The end of input keeps its place behind the events: what the client's
    // calls produced before it left is still answered.
    constexpr auto high = caf::message_priority::high;
    auto on_line = [&](std::string& l) {
      if (!l.empty()) self->send<high>(session, line_atom::value, std::move(l));
    };
    auto on_oversized = [&] { self->send<high>(session, oversize_atom::value, limit); };
    lines.feed(already_read, on_line, on_oversized);
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
  OutputQueue queue;
  bool flush_pending = false;
  bool nonblocking = false;    // a pipe or socket we made non-blocking: a stalled reader cannot block us
  bool broken = false;         // the reader of our stdout went away, or stopped reading for too long
  uint64_t limit = kDefaultMaxOutputBytes;
  // Back-pressure: when the client falls behind the sink (the session) pauses the model streams
  // that feed it, and lets them read on once it has caught up.
  PauseMarks marks{kDefaultPauseOutputBytes};
  pressure_sink_actor sink;
  std::chrono::steady_clock::time_point last_write{};  // the last write attempt
  // Shutting down while pending: the answer, once everything queued is out (or the reader is gone).
  caf::typed_response_promise<bool> closing;
  std::chrono::steady_clock::time_point last_progress{};  // the queue last got shorter
  // A non-blocking writer's wait for room in a full pipe (its thread starts with the first wait).
  std::unique_ptr<RoomWatch> room;
  static inline const char* name = "llmx.stdio_writer";
};

using writer_ptr = line_writer_actor::stateful_pointer<WriterState>;

constexpr auto kWriteEvery = std::chrono::milliseconds(2);

// Writes what the reader takes now. Returns false when bytes are left (the reader is slow).
bool write_some(WriterState& st) {
  st.last_write = std::chrono::steady_clock::now();
  while (!st.queue.empty() && !st.broken) {
    auto chunk = st.queue.next();
    ssize_t n = ::write(st.fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // retried by a timer
    if (n <= 0) {
      st.broken = true;
      break;
    }
    st.queue.consumed(static_cast<size_t>(n));
    st.last_progress = st.last_write;
  }
  if (st.broken) st.queue.clear();
  return st.queue.empty();
}

// A reader that takes nothing for this long has gone (shutdown gives up on it).
constexpr auto kStalled = std::chrono::seconds(1);

// Everything queued, blocking as long as it takes (shutdown of a blocking writer).
void write_all(WriterState& st) {
  while (!write_some(st)) {
    pollfd p{st.fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kStalled).count())) <= 0 && !(p.revents & POLLOUT)) {
      st.broken = true;
      st.queue.clear();
    }
  }
}

// Lines already queued behind this one are taken from the mailbox before the flush arrives.
void schedule_flush(writer_ptr self) {
  if (self->state.flush_pending) return;
  self->state.flush_pending = true;
  self->send(self, flush_atom::value);
}

// A writer on the worker threads never waits in poll: the room watch does, and sends the flush
// once the reader has made room (or after kStalled, so that a reader gone quiet is noticed).
// Without a watch (no thread to be had) it comes back every millisecond.
void flush_when_room(writer_ptr self) {
  auto& st = self->state;
  if (st.flush_pending) return;
  st.flush_pending = true;
  if (!st.room) {
    caf::weak_actor_ptr weak{self->ctrl()};
    st.room = std::make_unique<RoomWatch>(st.fd, kStalled, [weak] {
      if (auto writer = weak.lock()) caf::anon_send(caf::actor_cast<line_writer_actor>(writer), flush_atom::value);
    });
  }
  if (st.room->running())
    st.room->arm();
  else
    self->delayed_send(self, std::chrono::milliseconds(1), flush_atom::value);
}

// Everything is out (or cannot be): the session hears it, and the writer ends.
void finish_shutdown(writer_ptr self) {
  auto& st = self->state;
  st.closing.deliver(true);
  self->quit();
}

// The client is not keeping up. Memory stays bounded: past the limit its output is dropped and
// stdout is closed, which the client sees as end of stream (and we say why on stderr). Checked
// as lines come too: a writer waiting for room may not flush for a second.
bool over_limit(writer_ptr self) {
  auto& st = self->state;
  if (st.queue.size() <= st.limit) return false;
  log::error("stdout: the client stopped reading; {} bytes of output are queued (limit {}, "
             "LLMX_MAX_OUTPUT_BYTES). Closing stdout and ending the session.",
             st.queue.size(), st.limit);
  st.broken = true;
  st.queue.clear();
  ::close(st.fd);
  self->quit(caf::exit_reason::user_shutdown);  // the session sees us go (see below)
  return true;
}

// Once the client cannot read what we write (its end closed, or the output cap reached), the
// writer ends: the session monitors it, and interrupts its turns and ends as at end of input,
// instead of streaming on into nothing until stdin closes.
void flush(writer_ptr self) {
  auto& st = self->state;
  if (!write_some(st)) {
    if (over_limit(self)) return;
    // Wait briefly for room, then go back to the mailbox before the next attempt: a reply that
    // goes ahead must not wait until the whole backlog is written, and queued lines join the
    // next write (and count against the limit). A writer on a worker thread waits for the room
    // watch.
    if (st.closing.pending() && std::chrono::steady_clock::now() - st.last_progress >= kStalled) {
      st.broken = true;
      st.queue.clear();
      return finish_shutdown(self);
    }
    if (st.nonblocking) return flush_when_room(self);
    pollfd p{st.fd, POLLOUT, 0};
    (void)::poll(&p, 1, 10);
    return schedule_flush(self);
  }
  if (st.closing.pending()) return finish_shutdown(self);
  if (st.broken) {
    log::error("stdout: the client closed it; ending the session.");
    self->quit(caf::exit_reason::user_shutdown);
  }
}

// Tells the sink when the unread output crosses the marks.
void check_marks(writer_ptr self) {
  auto& st = self->state;
  if (auto behind = st.marks.update(st.queue.size()); behind && st.sink)
    self->send<caf::message_priority::high>(st.sink, pressure_atom::value, *behind);
}

// Queues one line, in order or ahead of the queued ones (see OutputQueue).
void queue_line(writer_ptr self, std::string& line, bool ahead) {
  auto& st = self->state;
  if (st.broken) return;
  if (ahead)
    st.queue.push_ahead(line);
  else
    st.queue.push(std::move(line));
  // The flush waits behind every line already in the mailbox, which under a burst is a second
  // of work or more: meanwhile the pipe is kept fed (and a reply ahead leaves) every couple of
  // milliseconds.
  if (std::chrono::steady_clock::now() - st.last_write >= kWriteEvery) write_some(st);
  if (over_limit(self)) return;
  check_marks(self);
  schedule_flush(self);
}

// A pipe or socket is made non-blocking: a stalled reader cannot block us, and the writer can
// run on the worker threads (no thread of its own to wake for every batch). A file or terminal
// keeps blocking writes, on a thread of the writer's own.
bool make_nonblocking(int fd) {
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))) return false;
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

line_writer_actor::behavior_type writer_impl(writer_ptr self, int fd, bool nonblocking) {
  auto& st0 = self->state;
  st0.fd = fd;
  st0.limit = max_output_bytes();
  st0.marks = PauseMarks{pause_output_bytes()};
  st0.nonblocking = nonblocking;
  return {
      [=](line_atom, std::string& line) { queue_line(self, line, false); },
      [=](ahead_atom, std::string& line) { queue_line(self, line, true); },
      [=](pressure_atom, pressure_sink_actor& sink) { self->state.sink = std::move(sink); },
      [=](flush_atom) {
        self->state.flush_pending = false;
        flush(self);
        check_marks(self);
      },
      [=](shutdown_atom) -> caf::result<bool> {
        auto& st = self->state;
        if (!st.nonblocking) {
          write_all(st);
          self->quit();
          return true;
        }
        if (st.closing.pending()) return true;
        st.last_progress = std::chrono::steady_clock::now();
        st.closing = self->make_response_promise<bool>();
        if (!st.flush_pending) flush(self);
        return st.closing;
      },
  };
}

}  // namespace

line_writer_actor spawn_line_writer(caf::actor_system& sys, int fd) {
  if (make_nonblocking(fd)) return sys.spawn(writer_impl, fd, true);
  return sys.spawn<caf::detached>(writer_impl, fd, false);
}

}  // namespace llmx
