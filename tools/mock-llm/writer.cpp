#include "tools/mock-llm/writer.hpp"

#include "tools/mock-llm/text_util.hpp"

#include <algorithm>
#include <thread>

namespace mockllm {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHangLimit = std::chrono::minutes(10);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

bool send_payload(httplib::DataSink &sink, const std::string &payload, bool bytewise) {
  if (!bytewise) return sink.write(payload.data(), payload.size());
  for (const char &c : payload)
    if (!sink.write(&c, 1)) return false;
  return true;
}

// Writes the whole script; false means "drop the connection" (client gone, cut, hang, end).
bool stream_script(const Script &script, FrameRenderer &renderer, long long global_delay_ms,
                   httplib::DataSink &sink) {
  const auto global_delay = std::chrono::milliseconds(global_delay_ms);
  bool first = true;
  auto emit = [&](const std::string &payload) {
    if (!first && global_delay_ms > 0 && !wait_while_connected(sink, global_delay)) return false;
    first = false;
    return send_payload(sink, payload, script.bytewise);
  };
  auto emit_all = [&](const Frames &frames) {
    return std::all_of(frames.begin(), frames.end(), emit);
  };

  Frames frames;
  for (const Event &e : script.events) {
    switch (e.kind) {
    case EventKind::Sleep:
      if (!wait_while_connected(sink, std::chrono::milliseconds(e.ms))) return false;
      break;
    case EventKind::Cut: return false;
    case EventKind::Hang:
      wait_while_connected(sink, kHangLimit);
      return false;
    case EventKind::End:
      sink.done(); // a clean end of the chunked body; returning false then closes the socket
      return false;
    case EventKind::Raw:
      if (!emit(e.text)) return false;
      break;
    default:
      frames.clear();
      renderer.render(e, frames);
      if (!emit_all(frames)) return false;
    }
  }
  frames.clear();
  renderer.finish(frames);
  if (!emit_all(frames)) return false;
  sink.done();
  return true;
}

// Total time the streamed version would take, so slow scenarios stay slow without streaming.
std::chrono::milliseconds stream_duration(const Script &script, long long global_delay_ms) {
  long long ms = 0, written = 0;
  for (const Event &e : script.events) {
    if (e.kind == EventKind::Sleep)
      ms += e.ms;
    else if (e.kind != EventKind::Cut && e.kind != EventKind::Hang && e.kind != EventKind::End)
      ++written;
  }
  if (written > 0) ms += global_delay_ms * written; // one gap per event incl. [DONE]
  return std::chrono::milliseconds(ms);
}

} // namespace

void append_event_text(std::string &out, const Event &e) {
  if (e.raw_utf8)
    append_json_string_unchecked(out, e.text);
  else
    append_json_string(out, e.text);
}

bool wait_while_connected(httplib::DataSink &sink, Clock::duration total) {
  const auto deadline = Clock::now() + total;
  for (;;) {
    if (!sink.is_writable()) return false;
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(left, kPollInterval));
  }
}

void write_stream(std::shared_ptr<const Script> script, std::shared_ptr<FrameRenderer> renderer,
                  long long global_delay_ms, httplib::Response &res) {
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  // Exactly "text/event-stream": httplib skips compression only for this content type.
  res.set_chunked_content_provider(
      "text/event-stream",
      [script, renderer, global_delay_ms](size_t offset, httplib::DataSink &sink) {
        if (offset > 0) { // already fully written
          sink.done();
          return true;
        }
        return stream_script(*script, *renderer, global_delay_ms, sink);
      });
}

void write_json_answer(const Script &script, long long global_delay_ms,
                       const std::function<std::string()> &body_of, httplib::Response &res) {
  res.status = 200;
  const bool truncated = !script.completes();
  if (!truncated) std::this_thread::sleep_for(stream_duration(script, global_delay_ms));
  if (script.non_stream_status != 200) {
    res.status = script.non_stream_status;
    res.set_content(script.non_stream_error_body, "application/json");
    return;
  }
  auto body = std::make_shared<const std::string>(body_of());
  if (!truncated) {
    res.set_content(*body, "application/json");
    return;
  }
  // cut / hang without streaming: promise the full Content-Length, then deliver half of it
  // (cut) or nothing (hang) and drop the connection.
  const bool hang = std::any_of(script.events.begin(), script.events.end(),
                                [](const Event &e) { return e.kind == EventKind::Hang; });
  res.set_content_provider(body->size(), "application/json",
                           [body, hang](size_t offset, size_t, httplib::DataSink &sink) {
                             if (hang) {
                               wait_while_connected(sink, kHangLimit);
                               return false;
                             }
                             if (offset == 0) sink.write(body->data(), body->size() / 2);
                             return false;
                           });
}

} // namespace mockllm
