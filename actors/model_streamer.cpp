#include "actors/model_streamer.hpp"

#include "actors/delivery_window.hpp"

#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "protocol/model/responses_request.hpp"
#include "protocol/model/retry_policy.hpp"
#include "protocol/base/secret_env.hpp"
#include "transport/http_client.hpp"
#include "transport/model_stream_reader.hpp"

namespace llmx {

namespace {

// The streamer reads time from the actor clock (steady_clock in a running system), so its idle
// timer can be driven by CAF's test coordinator.
int64_t ticks(std::chrono::steady_clock::time_point t) { return t.time_since_epoch().count(); }

// Runs on the HTTP loop thread: decodes the stream as it arrives and posts the model events
// straight to the turn executor (one message per network read); only the attempt's outcome
// goes to the streamer actor. Never blocks. Reading stops while the clients have too many of
// the stream's events still to handle (the window).
class StreamHandler : public http::Handler {
 public:
  StreamHandler(model_streamer_actor streamer, turn_executor_actor executor, uint64_t seq, uint32_t attempt,
                std::string call_id_prefix, WireApi wire, std::shared_ptr<std::atomic<int64_t>> last_activity,
                std::shared_ptr<DeliveryWindow> window)
      : streamer_(std::move(streamer)),
        executor_(std::move(executor)),
        seq_(seq),
        attempt_(attempt),
        reader_(attempt, std::move(call_id_prefix), wire),
        last_activity_(std::move(last_activity)),
        window_(std::move(window)) {}

  void on_head(const http::ResponseHead& head) override {
    touch();
    std::vector<ModelEvent> events;
    reader_.on_head(head.status, head.headers, events);
    deliver(events);
  }
  void on_body(std::string_view chunk) override {
    touch();
    if (reported_) return;
    std::vector<ModelEvent> events;
    // Sized like the last batch: growing it one event at a time cost an allocation every few deltas.
    events.reserve(std::min<size_t>(last_batch_, kMaxReserve));
    reader_.on_body(chunk, events);
    last_batch_ = events.size();
    deliver(events);
    if (reader_.finished()) report();
  }
  void on_done(const std::string& error) override {
    if (reported_) return;
    if (error == http::kCancelled) return;  // the streamer cancelled us; it knows why
    std::vector<ModelEvent> events;
    reader_.on_end(error, events);
    deliver(events);
    report();
  }
  // After the outcome the last bytes are read regardless: the connection goes back to the pool.
  bool hold() override { return !reported_ && window_->close_if_full(request()); }

 private:
  void touch() {
    // steady_clock, which is what the actor clock reads in a running system. Not the actor clock
    // itself: this runs on the HTTP thread, which may outlive an actor system.
    last_activity_->store(ticks(std::chrono::steady_clock::now()), std::memory_order_relaxed);
  }
  void deliver(std::vector<ModelEvent>& events) {
    if (events.empty()) return;
    auto claim = window_->issue(events.size());
    caf::anon_send(executor_, ModelEvents{seq_, attempt_, std::move(events), std::move(claim)});
  }
  void report() {
    reported_ = true;
    caf::anon_send(streamer_, reader_.outcome());
  }

  model_streamer_actor streamer_;
  turn_executor_actor executor_;
  uint64_t seq_;
  uint32_t attempt_;
  ModelStreamReader reader_;
  std::shared_ptr<std::atomic<int64_t>> last_activity_;
  std::shared_ptr<DeliveryWindow> window_;
  bool reported_ = false;
  static constexpr size_t kMaxReserve = 256;
  size_t last_batch_ = 0;  // events in the last body chunk
};

struct StreamerState {
  StreamerState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  // Killed with its executor (linked): the transfer goes too, instead of reading on for no one.
  ~StreamerState() {
    if (http_id) http::Client::shared().cancel(http_id);
  }
  StreamerState(const StreamerState&) = delete;
  StreamerState& operator=(const StreamerState&) = delete;
  turn_executor_actor executor;
  ModelRequest request;
  WireApi wire = WireApi::chat;  // what the attempts speak: chat or responses
  SharedString body;  // each attempt sends the same one
  std::vector<std::pair<std::string, std::string>> headers;
  uint32_t attempt = 0;
  uint32_t request_failures = 0;  // HTTP-level retries used (429/5xx/transport)
  uint32_t stream_failures = 0;   // cut streams re-sent
  http::RequestId http_id = 0;
  std::shared_ptr<std::atomic<int64_t>> last_activity = std::make_shared<std::atomic<int64_t>>(0);
  std::shared_ptr<DeliveryWindow> window;  // shared by the attempts; created with the request
  uint64_t idle_generation = 0;
  bool finished = false;
  bool paused = false;  // the clients of this conversation cannot keep up: nothing is read
  static inline const char* name = "llmx.model_streamer";
};

using streamer_ptr = model_streamer_actor::stateful_pointer<StreamerState>;

void finish(streamer_ptr self) {
  auto& st = self->state;
  st.finished = true;
  if (st.http_id) http::Client::shared().cancel(st.http_id);
  st.http_id = 0;
  self->quit();
}

// The response is complete, but the transfer may still have its last bytes to read (the chunked
// body's end after [DONE]). Cancelling now would close the connection instead of returning it to
// the keep-alive pool, so the HTTP loop gives the transfer a moment to end by itself; a server
// that keeps the stream open after the end is cut off then.
constexpr auto kLinger = std::chrono::seconds(1);

void completed(streamer_ptr self) {
  auto& st = self->state;
  st.finished = true;
  if (st.http_id) http::Client::shared().finish_within(st.http_id, kLinger);
  st.http_id = 0;
  self->quit();
}

void fail(streamer_ptr self, std::string message) {
  self->send(self->state.executor, ModelFailed{self->state.request.seq, std::move(message)});
  finish(self);
}

void start_attempt(streamer_ptr self) {
  auto& st = self->state;
  ++st.attempt;
  http::Request req;
  const auto& provider = st.request.provider;
  req.url = st.wire == WireApi::responses ? provider.responses_url() : provider.chat_url();
  req.headers = st.headers;
  req.body = st.body;
  st.last_activity->store(ticks(self->clock().now()), std::memory_order_relaxed);
  st.http_id = http::Client::shared().start(
      std::move(req),
      std::make_shared<StreamHandler>(caf::actor_cast<model_streamer_actor>(self), st.executor, st.request.seq,
                                      st.attempt, st.request.call_id_prefix, st.wire, st.last_activity, st.window));
  if (st.paused) http::Client::shared().pause(st.http_id, true);  // a retry while paused
  auto timeout = std::chrono::milliseconds(std::max<int64_t>(st.request.provider.stream_idle_timeout_ms, 1));
  self->delayed_send(self, timeout, idle_atom::value, ++st.idle_generation);
}

// Schedules another attempt after `delay_ms`, telling the executor why.
void retry_later(streamer_ptr self, int64_t delay_ms, std::string notice) {
  auto& st = self->state;
  if (st.http_id) http::Client::shared().cancel(st.http_id);
  st.http_id = 0;
  ++st.idle_generation;  // the pending idle check belongs to the dead attempt
  // The cancel reaches the HTTP thread later: what the attempt reads until then arrives after
  // this notice, and the task drops it by its attempt number.
  self->send(st.executor, ModelRetrying{st.request.seq, st.attempt, std::move(notice)});
  self->delayed_send(self, std::chrono::milliseconds(delay_ms), retry_atom::value, st.attempt + 1);
}

void on_stream_error(streamer_ptr self, const std::string& message, std::optional<int64_t> delay = std::nullopt) {
  auto& st = self->state;
  auto max = static_cast<uint32_t>(std::max<int64_t>(st.request.provider.stream_max_retries, 0));
  if (st.stream_failures < max) {
    ++st.stream_failures;
    retry_later(self, delay.value_or(retry::backoff_ms(st.stream_failures)),
                fmt::format("Reconnecting... {}/{} ({})", st.stream_failures, max, message));
  } else {
    fail(self, max == 0 ? message : fmt::format("{} (gave up after {} reconnects)", message, max));
  }
}

void on_request_error(streamer_ptr self, std::string final_message, std::optional<int64_t> delay) {
  auto& st = self->state;
  auto max = static_cast<uint32_t>(std::max<int64_t>(st.request.provider.request_max_retries, 0));
  if (st.request_failures < max) {
    ++st.request_failures;
    retry_later(self, delay.value_or(retry::backoff_ms(st.request_failures)),
                fmt::format("Reconnecting... {}/{} ({})", st.request_failures, max, final_message));
  } else {
    fail(self, max == 0 ? std::move(final_message)
                        : fmt::format("{} (exceeded retry limit: {} retries)", final_message, max));
  }
}

// An `auto` provider's Responses request may go on over Chat, unless it needs what only
// Responses carries (an access program).
bool may_fall_back(const StreamerState& st) {
  return st.request.provider.wire_api == WireApi::automatic && st.wire == WireApi::responses &&
         !st.request.prompt.cyber_access_program;
}

// The provider does not serve Responses: the same request again over Chat, at once (not a
// retry: nothing failed that Chat would not fix), and the executor hears why.
void fall_back(streamer_ptr self, std::string reason) {
  auto& st = self->state;
  st.wire = WireApi::chat;
  st.body = build_chat_request(st.request.prompt, st.request.provider);
  st.request.prompt.input = {};  // no second fall back
  std::erase_if(st.headers, [](const auto& h) { return h.first == "conversation_id" || h.first == "session_id"; });
  st.request_failures = st.stream_failures = 0;  // a new wire starts with its own retries
  self->send(st.executor, WireFallback{st.request.seq, st.request.provider.cache_key(), st.request.provider.id,
                                       std::move(reason)});
  ++st.idle_generation;
  start_attempt(self);
}

model_streamer_actor::behavior_type streamer_impl(streamer_ptr self, turn_executor_actor executor,
                                                  ModelRequest request) {
  auto& st = self->state;
  st.executor = std::move(executor);
  st.request = std::move(request);
  st.wire = st.request.wire == WireApi::automatic ? WireApi::responses : st.request.wire;
  // The window reopens on whichever thread handed back the last claim it needed. A stream held
  // for its clients is silent because of us, not the provider: the idle timeout starts again.
  st.window = DeliveryWindow::make(stream_window_events(), [last = st.last_activity](uint64_t request) {
    last->store(ticks(std::chrono::steady_clock::now()), std::memory_order_relaxed);
    http::Client::shared().release(request);
  });
  const bool responses = st.wire == WireApi::responses;
  st.body = responses ? build_responses_request(st.request.prompt, st.request.provider)
                      : build_chat_request(st.request.prompt, st.request.provider);
  // Retries send the body again; the history is kept only for a fall back to Chat. Once let go,
  // the task appends its next items in place instead of opening a segment (history.hpp).
  if (!may_fall_back(st)) st.request.prompt.input = {};
  auto token = resolve_bearer_token(st.request.provider);
  st.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"},
                {"User-Agent", st.request.user_agent}, {"originator", "llmx"}};
  if (responses && !st.request.prompt.conversation_id.empty()) {  // engine.md §3.2
    st.headers.emplace_back("conversation_id", st.request.prompt.conversation_id);
    st.headers.emplace_back("session_id", st.request.prompt.conversation_id);
  }
  for (auto& h : provider_headers(st.request.provider, token)) st.headers.push_back(std::move(h));
  if (token.error) {
    st.finished = true;
    self->send(st.executor, ModelFailed{st.request.seq, *token.error});
    self->quit();
  } else {
    start_attempt(self);
  }
  return {
      [=](cancel_atom) { finish(self); },
      [=](StreamOutcome& o) {
        auto& st = self->state;
        if (o.attempt != st.attempt || st.finished || !st.http_id) return;
        switch (o.kind) {
          case StreamOutcome::completed: return completed(self);
          case StreamOutcome::provider_error: return fail(self, std::move(o.message));
          case StreamOutcome::stream_error:
            if (st.http_id) http::Client::shared().cancel(st.http_id);
            st.http_id = 0;
            return on_stream_error(self, o.message,
                                   o.retry_after_ms ? std::optional<int64_t>(*o.retry_after_ms) : std::nullopt);
          case StreamOutcome::transport_error: st.http_id = 0; return on_request_error(self, std::move(o.message), std::nullopt);
          case StreamOutcome::http_status:
            st.http_id = 0;
            if (o.responses_refused && may_fall_back(st)) return fall_back(self, std::move(*o.responses_refused));
            if (retry::retryable_status(o.status)) {
              std::optional<int64_t> delay;
              if (o.retry_after_ms) delay = *o.retry_after_ms;
              return on_request_error(self, std::move(o.message), delay);
            }
            return fail(self, std::move(o.message));
        }
        fail(self, "internal error: unknown stream outcome");
      },
      [=](retry_atom, uint32_t attempt) {
        if (attempt != self->state.attempt + 1 || self->state.finished) return;
        start_attempt(self);
      },
      [=](pause_atom, bool paused) {
        auto& st = self->state;
        if (st.paused == paused || st.finished) return;
        st.paused = paused;
        // The silence of a paused stream is ours, not the provider's: the idle timeout counts
        // again from the moment we read on.
        if (!paused) st.last_activity->store(ticks(self->clock().now()), std::memory_order_relaxed);
        if (st.http_id) http::Client::shared().pause(st.http_id, paused);
      },
      [=](idle_atom, uint64_t generation) {
        auto& st = self->state;
        if (generation != st.idle_generation || st.finished || !st.http_id) return;
        auto timeout = std::chrono::milliseconds(std::max<int64_t>(st.request.provider.stream_idle_timeout_ms, 1));
        if (st.paused || st.window->closed()) {  // checked again a full timeout after we read on
          self->delayed_send(self, timeout, idle_atom::value, generation);
          return;
        }
        auto last = caf::actor_clock::time_point(
            caf::actor_clock::duration_type(st.last_activity->load(std::memory_order_relaxed)));
        auto silent = self->clock().now() - last;
        if (silent >= timeout) {
          http::Client::shared().cancel(st.http_id);
          st.http_id = 0;
          return on_stream_error(self, "stream disconnected before completion: idle timeout waiting for SSE");
        }
        self->delayed_send(self, std::chrono::duration_cast<std::chrono::milliseconds>(timeout - silent),
                           idle_atom::value, generation);
      },
  };
}

}  // namespace

model_streamer_actor spawn_model_streamer(caf::local_actor* parent, turn_executor_actor executor,
                                          ModelRequest request) {
  // Linked: a stream that crashes ends its task with an error instead of leaving it waiting,
  // and a task that is killed takes its stream along. (A normal end of either is ignored.)
  return parent->spawn<caf::linked>(streamer_impl, std::move(executor), std::move(request));
}

}  // namespace llmx
