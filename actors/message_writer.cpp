#include "actors/message_writer.hpp"

namespace llmx {

namespace {

line_writer_actor::behavior_type message_writer(line_writer_actor::pointer self, std::function<void(std::string)> send,
                                                std::function<void()> closed) {
  return {
      // A session writes batches of lines joined by '\n' (JSON lines hold no raw newline).
      [send](line_atom, std::string& lines) {
        size_t start = 0;
        while (start <= lines.size()) {
          auto end = lines.find('\n', start);
          if (end == std::string::npos) end = lines.size();
          if (end > start) send(lines.substr(start, end - start));
          start = end + 1;
        }
      },
      // The listener sends each line as it comes: there is no queue here to overtake.
      [send](ahead_atom, std::string& line) { send(std::move(line)); },
      // Connections keep their own queues and limits (transport/http_listener.cpp).
      [](pressure_atom, pressure_sink_actor&) {},
      [](flush_atom) {},  // nothing is buffered here: the listener queues per connection
      [self, closed](shutdown_atom) {
        if (closed) closed();
        self->quit();
        return true;
      },
  };
}

}  // namespace

line_writer_actor spawn_message_writer(caf::actor_system& sys, std::function<void(std::string)> send,
                                       std::function<void()> closed) {
  return sys.spawn(message_writer, std::move(send), std::move(closed));
}

}  // namespace llmx
