#include "transport/model_stream_reader.hpp"

#include <chrono>

#include "protocol/core/rate_limits.hpp"
#include "protocol/model/provider_models.hpp"
#include "protocol/model/retry_policy.hpp"
#include "protocol/base/text.hpp"

namespace llmx {

namespace {
bool ok_status(long s) { return s >= 200 && s <= 299; }
constexpr size_t kMaxErrorBody = 64 * 1024;

std::variant<ChatStreamParser, ResponsesStreamParser> make_parser(WireApi wire, std::string prefix) {
  if (wire == WireApi::responses) return ResponsesStreamParser{};
  return ChatStreamParser{std::move(prefix)};
}
}  // namespace

ModelStreamReader::ModelStreamReader(uint32_t attempt, std::string call_id_prefix, WireApi wire)
    : parser_(make_parser(wire, std::move(call_id_prefix))), responses_(wire == WireApi::responses) {
  outcome_.attempt = attempt;
}

void ModelStreamReader::finish(int32_t kind, std::string message) {
  if (finished_) return;
  finished_ = true;
  outcome_.kind = kind;
  outcome_.status = status_;
  outcome_.message = std::move(message);
}

ModelStreamReader::Parsed ModelStreamReader::feed_event(std::string_view data, std::vector<ModelEvent>& out) {
  // Both parsers' statuses are cast to Parsed: the same three values in the same order.
  static_assert(int(ChatStreamParser::Status::done) == int(Parsed::done) &&
                int(ChatStreamParser::Status::error) == int(Parsed::error) &&
                int(ResponsesStreamParser::Status::done) == int(Parsed::done) &&
                int(ResponsesStreamParser::Status::error) == int(Parsed::error));
  // The parsers skip what they cannot read; should one still throw, the attempt ends as a cut
  // stream here: an exception escaping to the HTTP loop would only cancel the transfer silently.
  try {
    return std::visit([&](auto& p) { return static_cast<Parsed>(p.on_data(data, out)); }, parser_);
  } catch (const std::exception& e) {
    internal_error_ = e.what();
    return Parsed::error;
  }
}

ModelStreamReader::Parsed ModelStreamReader::end_of_stream(std::vector<ModelEvent>& out) {
  return std::visit([&](auto& p) { return static_cast<Parsed>(p.on_end(out)); }, parser_);
}

// The provider reported an error inside the stream: retried as a cut stream when it says so.
void ModelStreamReader::finish_error() {
  if (!internal_error_.empty())
    return finish(StreamOutcome::stream_error,
                  "stream disconnected before completion: unreadable stream event (" + internal_error_ + ")");
  std::visit(
      [&](auto& p) {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, ResponsesStreamParser>)
          if (auto ms = p.retry_after_ms()) outcome_.retry_after_ms = *ms;
        finish(p.error_retryable() ? StreamOutcome::stream_error : StreamOutcome::provider_error, p.error_message());
      },
      parser_);
}

void ModelStreamReader::on_head(long status, const std::vector<std::pair<std::string, std::string>>& headers,
                                std::vector<ModelEvent>& out) {
  status_ = status;
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  if (ok_status(status) || status == 429) {
    if (auto snapshot = ratelimits::from_headers(headers, now.count())) out.push_back(RateLimits{std::move(*snapshot)});
  }
  std::optional<int64_t> seconds_header, ms_header;
  for (const auto& [name, value] : headers) {
    if (name.size() != 11 && name.size() != 14) continue;
    auto lower = text::lower(name);
    if (lower == "retry-after") seconds_header = retry::retry_after_ms(value, now.count());
    if (lower == "retry-after-ms") ms_header = retry::retry_after_ms_header(value);
  }
  // The finer-grained header wins when a server sends both (OpenAI does).
  if (auto wait = ms_header ? ms_header : seconds_header) outcome_.retry_after_ms = *wait;
}

void ModelStreamReader::on_body(std::string_view bytes, std::vector<ModelEvent>& out) {
  if (finished_) return;
  if (!ok_status(status_)) {
    if (error_body_.size() < kMaxErrorBody) error_body_.append(bytes.substr(0, kMaxErrorBody - error_body_.size()));
    return;
  }
  auto status = Parsed::more;
  bool ok = decoder_.feed(bytes, [&](sse::Event&& ev) {
    if (status == Parsed::more) status = feed_event(ev.data, out);
  });
  if (!ok) return finish(StreamOutcome::stream_error, "stream disconnected before completion: an SSE event exceeded the size limit");
  if (status == Parsed::done) return finish(StreamOutcome::completed, {});
  if (status == Parsed::error) return finish_error();
}

void ModelStreamReader::on_end(const std::string& transport_error, std::vector<ModelEvent>& out) {
  if (finished_) return;
  if (status_ == 0) return finish(StreamOutcome::transport_error, "Connection failed: " + transport_error);
  if (!ok_status(status_)) {
    if (responses_) outcome_.responses_refused = models::responses_refusal(status_, error_body_);
    return finish(StreamOutcome::http_status, retry::unexpected_status(status_, error_body_));
  }
  auto status = Parsed::more;
  decoder_.finish([&](sse::Event&& ev) {
    if (status == Parsed::more) status = feed_event(ev.data, out);
  });
  if (status == Parsed::error) return finish_error();
  if (status == Parsed::done || end_of_stream(out) == Parsed::done) return finish(StreamOutcome::completed, {});
  std::string message = std::visit([](auto& p) { return p.error_message(); }, parser_);
  if (!transport_error.empty()) message = "stream disconnected before completion: " + transport_error;
  finish(StreamOutcome::stream_error, std::move(message));
}

}  // namespace llmx
