#include "transport/chat_stream_reader.hpp"

#include <chrono>

#include "protocol/rate_limits.hpp"
#include "protocol/retry_policy.hpp"

namespace llmx {

namespace {
bool ok_status(long s) { return s >= 200 && s <= 299; }
constexpr size_t kMaxErrorBody = 64 * 1024;
}  // namespace

void ChatStreamReader::finish(int32_t kind, std::string message) {
  if (finished_) return;
  finished_ = true;
  outcome_.kind = kind;
  outcome_.status = status_;
  outcome_.message = std::move(message);
}

void ChatStreamReader::on_head(long status, const std::vector<std::pair<std::string, std::string>>& headers,
                               std::vector<ModelEvent>& out) {
  status_ = status;
  if (ok_status(status) || status == 429) {
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    if (auto snapshot = ratelimits::from_headers(headers, now.count())) out.push_back(RateLimits{std::move(*snapshot)});
  }
  for (const auto& [name, value] : headers) {
    if (name.size() != 11) continue;
    std::string lower;
    for (char c : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (lower == "retry-after")
      if (auto ms = retry::retry_after_ms(value)) outcome_.retry_after_ms = *ms;
  }
}

void ChatStreamReader::on_body(std::string_view bytes, std::vector<ModelEvent>& out) {
  if (finished_) return;
  if (!ok_status(status_)) {
    if (error_body_.size() < kMaxErrorBody) error_body_.append(bytes.substr(0, kMaxErrorBody - error_body_.size()));
    return;
  }
  auto status = ChatStreamParser::Status::more;
  bool ok = decoder_.feed(bytes, [&](sse::Event&& ev) {
    if (status == ChatStreamParser::Status::more) status = parser_.on_data(ev.data, out);
  });
  if (!ok) return finish(StreamOutcome::stream_error, "stream disconnected before completion: an SSE event exceeded the size limit");
  if (status == ChatStreamParser::Status::done) return finish(StreamOutcome::completed, {});
  if (status == ChatStreamParser::Status::error) return finish(StreamOutcome::provider_error, parser_.error_message());
}

void ChatStreamReader::on_end(const std::string& transport_error, std::vector<ModelEvent>& out) {
  if (finished_) return;
  if (status_ == 0) return finish(StreamOutcome::transport_error, "Connection failed: " + transport_error);
  if (!ok_status(status_)) return finish(StreamOutcome::http_status, retry::unexpected_status(status_, error_body_));
  decoder_.finish([&](sse::Event&& ev) { parser_.on_data(ev.data, out); });
  if (parser_.on_end(out) == ChatStreamParser::Status::done) return finish(StreamOutcome::completed, {});
  std::string message = parser_.error_message();
  if (!transport_error.empty()) message = "stream disconnected before completion: " + transport_error;
  finish(StreamOutcome::stream_error, std::move(message));
}

}  // namespace llmx
