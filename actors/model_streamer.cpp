#include "actors/model_streamer.hpp"

#include <chrono>

#include <fmt/format.h>

#include "protocol/chat_stream.hpp"
#include "protocol/retry_policy.hpp"
#include "transport/http_client.hpp"
#include "transport/sse_decoder.hpp"

namespace llmx {

namespace {

using clock = std::chrono::steady_clock;

// Runs on the HTTP loop thread: only posts messages, never blocks.
class StreamHandler : public http::Handler {
 public:
  StreamHandler(model_streamer_actor target, uint32_t attempt) : target_(std::move(target)), attempt_(attempt) {}
  void on_head(const http::ResponseHead& head) override {
    HttpHead h{attempt_, head.status, {}};
    for (const auto& [k, v] : head.headers) h.headers.push_back(k + ": " + v);
    caf::anon_send(target_, std::move(h));
  }
  void on_body(std::string_view chunk) override {
    caf::anon_send(target_, HttpBody{attempt_, std::string(chunk)});
  }
  void on_done(const std::string& error) override { caf::anon_send(target_, HttpDone{attempt_, error}); }

 private:
  model_streamer_actor target_;
  uint32_t attempt_;
};

struct StreamerState {
  StreamerState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  turn_executor_actor executor;
  ModelRequest request;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  uint32_t attempt = 0;
  uint32_t request_failures = 0;  // HTTP-level retries used (429/5xx/transport)
  uint32_t stream_failures = 0;   // cut streams re-sent
  http::RequestId http_id = 0;
  int64_t status = 0;
  std::optional<int64_t> retry_after;
  std::string error_body;
  std::unique_ptr<sse::Decoder> decoder;
  std::unique_ptr<ChatStreamParser> parser;
  clock::time_point last_activity;
  uint64_t idle_generation = 0;
  bool finished = false;
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

void fail(streamer_ptr self, std::string message) {
  self->send(self->state.executor, ModelFailed{self->state.request.seq, std::move(message)});
  finish(self);
}

void start_attempt(streamer_ptr self) {
  auto& st = self->state;
  ++st.attempt;
  st.status = 0;
  st.retry_after.reset();
  st.error_body.clear();
  st.decoder = std::make_unique<sse::Decoder>();
  st.parser = std::make_unique<ChatStreamParser>(st.request.call_id_prefix);
  http::Request req;
  req.url = st.request.provider.chat_url();
  req.headers = st.headers;
  req.body = st.body;
  st.http_id = http::Client::shared().start(
      std::move(req), std::make_shared<StreamHandler>(caf::actor_cast<model_streamer_actor>(self), st.attempt));
  st.last_activity = clock::now();
  auto timeout = std::chrono::milliseconds(std::max<int64_t>(st.request.provider.stream_idle_timeout_ms, 1));
  self->delayed_send(self, timeout, idle_atom::value, ++st.idle_generation);
}

// Schedules another attempt after `delay_ms`, telling the executor why.
void retry_later(streamer_ptr self, int64_t delay_ms, std::string notice) {
  auto& st = self->state;
  if (st.http_id) http::Client::shared().cancel(st.http_id);
  st.http_id = 0;
  ++st.idle_generation;  // the pending idle check belongs to the dead attempt
  self->send(st.executor, ModelRetrying{st.request.seq, std::move(notice)});
  self->delayed_send(self, std::chrono::milliseconds(delay_ms), retry_atom::value, st.attempt + 1);
}

void on_stream_error(streamer_ptr self, const std::string& message) {
  auto& st = self->state;
  auto max = static_cast<uint32_t>(std::max<int64_t>(st.request.provider.stream_max_retries, 0));
  if (st.stream_failures < max) {
    ++st.stream_failures;
    retry_later(self, retry::backoff_ms(st.stream_failures),
                fmt::format("Reconnecting... {}/{} ({})", st.stream_failures, max, message));
  } else {
    fail(self, message);
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
    fail(self, std::move(final_message));
  }
}

void deliver(streamer_ptr self, std::vector<ModelEvent>& events) {
  if (events.empty()) return;
  self->send(self->state.executor, ModelEvents{self->state.request.seq, std::move(events)});
  events.clear();
}

model_streamer_actor::behavior_type streamer_impl(streamer_ptr self, turn_executor_actor executor,
                                                  ModelRequest request) {
  auto& st = self->state;
  st.executor = std::move(executor);
  st.request = std::move(request);
  st.body = build_chat_request(st.request.prompt, st.request.provider);
  auto token = resolve_bearer_token(st.request.provider);
  st.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"},
                {"User-Agent", st.request.user_agent}, {"originator", "llmx"}};
  if (token.token) st.headers.emplace_back("Authorization", "Bearer " + *token.token);
  for (const auto& [k, v] : st.request.provider.http_headers) st.headers.emplace_back(k, v);
  for (const auto& [k, var] : st.request.provider.env_http_headers)
    if (const char* val = std::getenv(var.c_str()); val && *val) st.headers.emplace_back(k, val);
  if (token.error) {
    st.finished = true;
    self->send(st.executor, ModelFailed{st.request.seq, *token.error});
    self->quit();
  } else {
    start_attempt(self);
  }
  return {
      [=](cancel_atom) { finish(self); },
      [=](HttpHead& h) {
        auto& st = self->state;
        if (h.attempt != st.attempt || st.finished || !st.http_id) return;
        st.status = h.status;
        st.last_activity = clock::now();
        for (const auto& line : h.headers) {
          auto colon = line.find(':');
          if (colon == std::string::npos) continue;
          std::string name = line.substr(0, colon);
          for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (name == "retry-after") st.retry_after = retry::retry_after_ms(std::string_view(line).substr(colon + 1));
        }
      },
      [=](HttpBody& b) {
        auto& st = self->state;
        if (b.attempt != st.attempt || st.finished || !st.http_id) return;
        st.last_activity = clock::now();
        if (st.status < 200 || st.status > 299) {
          if (st.error_body.size() < 65536) st.error_body.append(b.bytes);
          return;
        }
        std::vector<ModelEvent> events;
        ChatStreamParser::Status status = ChatStreamParser::Status::more;
        bool ok = st.decoder->feed(b.bytes, [&](sse::Event&& ev) {
          if (status == ChatStreamParser::Status::more) status = st.parser->on_data(ev.data, events);
        });
        deliver(self, events);
        if (!ok) return fail(self, "stream disconnected before completion: an SSE event exceeded the size limit");
        if (status == ChatStreamParser::Status::done) return finish(self);
        if (status == ChatStreamParser::Status::error) return fail(self, st.parser->error_message());
      },
      [=](HttpDone& d) {
        auto& st = self->state;
        if (d.attempt != st.attempt || st.finished || !st.http_id) return;
        st.http_id = 0;
        if (st.status == 0) {
          // No response at all: connection refused, DNS, TLS, timeout...
          return on_request_error(self, "Connection failed: " + d.error, std::nullopt);
        }
        if (st.status < 200 || st.status > 299) {
          if (retry::retryable_status(st.status))
            return on_request_error(self, retry::unexpected_status(st.status, st.error_body), st.retry_after);
          return fail(self, retry::unexpected_status(st.status, st.error_body));
        }
        std::vector<ModelEvent> events;
        st.decoder->finish([&](sse::Event&& ev) { st.parser->on_data(ev.data, events); });
        auto status = st.parser->on_end(events);
        deliver(self, events);
        if (status == ChatStreamParser::Status::done) return finish(self);
        std::string message = st.parser->error_message();
        if (!d.error.empty()) message = "stream disconnected before completion: " + d.error;
        on_stream_error(self, message);
      },
      [=](retry_atom, uint32_t attempt) {
        if (attempt != self->state.attempt + 1 || self->state.finished) return;
        start_attempt(self);
      },
      [=](idle_atom, uint64_t generation) {
        auto& st = self->state;
        if (generation != st.idle_generation || st.finished || !st.http_id) return;
        auto timeout = std::chrono::milliseconds(std::max<int64_t>(st.request.provider.stream_idle_timeout_ms, 1));
        auto silent = clock::now() - st.last_activity;
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
  return parent->spawn(streamer_impl, std::move(executor), std::move(request));
}

}  // namespace llmx
