#include "protocol/model/responses_stream.hpp"
#include "protocol/model/retry_policy.hpp"

#include <charconv>
#include <cmath>
#include <regex>

#include <fmt/format.h>


namespace llmx {

namespace {

// A string field, "" when absent or of another type.
std::string_view str(json::Object o, std::string_view key) { return json::string_if(o, key).value_or(""); }

int64_t int_or(json::Object o, std::string_view key, int64_t fallback = 0) {
  return json::int_if(o, key).value_or(fallback);
}

std::optional<TokenUsage> read_responses_usage(json::Object u) {
  if (u.at_key("input_tokens").error() && u.at_key("output_tokens").error()) return std::nullopt;
  TokenUsage t;
  t.input_tokens = int_or(u, "input_tokens");
  t.output_tokens = int_or(u, "output_tokens");
  t.total_tokens = int_or(u, "total_tokens", t.input_tokens + t.output_tokens);
  if (auto d = json::object_if(u, "input_tokens_details")) t.cached_input_tokens = int_or(*d, "cached_tokens");
  if (auto d = json::object_if(u, "output_tokens_details")) t.reasoning_output_tokens = int_or(*d, "reasoning_tokens");
  return t;
}

// Texts of the `text` fields of an array of {type, text} parts.
std::vector<std::string> texts(json::Object item, std::string_view key, std::string_view type) {
  std::vector<std::string> out;
  auto v = json::get(item, key);
  if (!v || !v->is_array()) return out;
  for (auto arr = v->get_array().value_unsafe(); auto part : arr) {
    if (!part.is_object()) continue;
    auto p = part.get_object().value_unsafe();
    if (!type.empty() && str(p, "type") != type) continue;
    out.emplace_back(str(p, "text"));
  }
  return out;
}

}  // namespace

std::optional<int64_t> try_again_delay_ms(std::string_view message) {
  static const std::regex re(R"(try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b)", std::regex::icase);
  std::cmatch m;
  if (!std::regex_search(message.data(), message.data() + message.size(), m, re)) return std::nullopt;
  // A provider's number of any length: capped like a Retry-After header (found by fuzz_responses_stream).
  double v = 0;
  if (std::from_chars(m[1].first, m[1].second, v).ec == std::errc::result_out_of_range) v = retry::kMaxRetryAfterMs;
  bool ms = m[2].length() == 2 && (m[2].str()[0] == 'm' || m[2].str()[0] == 'M');
  return static_cast<int64_t>(std::ceil(std::min<double>(ms ? v : v * 1000, retry::kMaxRetryAfterMs)));
}

std::optional<ResponseItem> response_item_from_json(json::Object item) {
  auto type = str(item, "type");
  if (type == "message") {
    MessageItem m;
    m.role = std::string(str(item, "role"));
    if (m.role.empty()) m.role = "assistant";
    for (auto& t : texts(item, "content", "output_text")) m.content.push_back(OutputText{std::move(t)});
    return ResponseItem{std::move(m)};
  }
  if (type == "reasoning") {
    ReasoningItem r;
    for (auto& t : texts(item, "summary", "summary_text")) r.summary.push_back(SummaryText{std::move(t)});
    auto content = texts(item, "content", "reasoning_text");
    if (!content.empty()) {
      r.content.emplace();
      for (auto& t : content) r.content->push_back(ReasoningText{std::move(t)});
    }
    if (auto enc = json::string_if(item, "encrypted_content")) r.encrypted_content = std::string(*enc);
    return ResponseItem{std::move(r)};
  }
  if (type == "function_call") {
    std::string arguments(str(item, "arguments"));
    return ResponseItem{FunctionCallItem{std::string(str(item, "name")), arguments.empty() ? "{}" : arguments,
                                         std::string(str(item, "call_id"))}};
  }
  return std::nullopt;
}

void ResponsesStreamParser::fail(json::Object error) {
  auto code = str(error, "code");
  auto type = str(error, "type");
  std::string message(str(error, "message"));
  if (message.empty()) message = code.empty() ? "response.failed event received" : std::string(code);
  // Retrying cannot fix a prompt that does not fit, an empty quota or a refused request.
  for (auto fatal : {"context_length_exceeded", "insufficient_quota", "usage_limit_reached", "usage_not_included",
                     "invalid_prompt", "invalid_request_error"})
    if (code == fatal || type == fatal) {
      error_retryable_ = false;
      error_ = code == "context_length_exceeded" ? fmt::format("context_length_exceeded: {}", message) : message;
      return;
    }
  error_retryable_ = true;
  error_ = fmt::format("stream disconnected before completion: {}", message);
  retry_after_ms_ = try_again_delay_ms(message);
}

void ResponsesStreamParser::finish(json::Object response, std::string finish_reason, std::vector<ModelEvent>& out) {
  std::optional<TokenUsage> usage;
  if (auto u = json::object_if(response, "usage")) usage = read_responses_usage(*u);
  out.push_back(Completed{usage, std::move(finish_reason)});
  done_ = true;
}

ResponsesStreamParser::Status ResponsesStreamParser::on_data(std::string_view data, std::vector<ModelEvent>& out) {
  if (done_) return Status::done;
  std::string repaired;
  auto root = json::parse_repairing_utf8(parser_, data, repaired);
  if (!root || !root->is_object()) return Status::more;  // unparseable events are skipped
  auto ev = root->get_object().value_unsafe();
  auto type = str(ev, "type");
  if (type == "response.output_text.delta") {
    if (auto d = str(ev, "delta"); !d.empty()) out.push_back(TextDelta{std::string(d)});
  } else if (type == "response.reasoning_summary_text.delta" || type == "response.reasoning_text.delta") {
    if (auto d = str(ev, "delta"); !d.empty()) out.push_back(ReasoningDelta{std::string(d)});
  } else if (type == "response.output_item.done") {
    if (auto item = json::object_if(ev, "item"))
      if (auto it = response_item_from_json(*item)) out.push_back(ItemDone{std::move(*it)});
  } else if (type == "response.completed") {
    finish(json::object_if(ev, "response").value_or(ev), "", out);
    return Status::done;
  } else if (type == "response.incomplete") {
    // Cut short by the output limit or the content filter: the turn ends like Chat's `length`.
    auto response = json::object_if(ev, "response").value_or(ev);
    std::string reason = "length";
    if (auto details = json::object_if(response, "incomplete_details"))
      if (str(*details, "reason") == "content_filter") reason = "content_filter";
    finish(response, reason, out);
    return Status::done;
  } else if (type == "response.failed") {
    auto response = json::object_if(ev, "response");
    auto error = response ? json::object_if(*response, "error") : std::nullopt;
    if (error) {
      fail(*error);
    } else {
      error_retryable_ = true;
      error_ = "stream disconnected before completion: response.failed event received";
    }
    return Status::error;
  } else if (type == "error") {
    fail(json::object_if(ev, "error").value_or(ev));
    return Status::error;
  }
  return Status::more;
}

ResponsesStreamParser::Status ResponsesStreamParser::on_end(std::vector<ModelEvent>&) {
  if (done_) return Status::done;
  error_ = "stream disconnected before completion: stream closed before response.completed";
  error_retryable_ = true;
  return Status::error;
}

}  // namespace llmx
