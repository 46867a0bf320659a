#include "protocol/chat_stream.hpp"

#include <fmt/format.h>

namespace llmx {

namespace {

// A string field, or the `text` / `content` of an object (providers differ in reasoning shape).
std::string text_of(json::Element e) {
  if (e.is_string()) return std::string(e.get_string().value_unsafe());
  if (e.is_object()) {
    auto o = e.get_object().value_unsafe();
    for (auto key : {"text", "content"}) {
      auto v = o.at_key(key);
      if (!v.error() && v.value_unsafe().is_string()) return std::string(v.value_unsafe().get_string().value_unsafe());
    }
  }
  return {};
}

std::optional<int64_t> int_at(json::Object o, std::string_view key) {
  auto v = o.at_key(key);
  if (v.error() || !v.value_unsafe().is_int64()) return std::nullopt;
  return v.value_unsafe().get_int64().value_unsafe();
}

std::optional<TokenUsage> read_usage(json::Object usage) {
  auto prompt = int_at(usage, "prompt_tokens");
  auto completion = int_at(usage, "completion_tokens");
  auto total = int_at(usage, "total_tokens");
  if (!prompt || !completion) return std::nullopt;
  TokenUsage u;
  u.input_tokens = *prompt;
  u.output_tokens = *completion;
  u.total_tokens = total.value_or(*prompt + *completion);
  if (auto d = usage.at_key("prompt_tokens_details"); !d.error() && d.value_unsafe().is_object())
    u.cached_input_tokens = int_at(d.value_unsafe().get_object().value_unsafe(), "cached_tokens").value_or(0);
  // Anthropic via LiteLLM reports cache reads at the top level.
  if (u.cached_input_tokens == 0)
    u.cached_input_tokens = int_at(usage, "cache_read_input_tokens").value_or(0);
  if (auto d = usage.at_key("completion_tokens_details"); !d.error() && d.value_unsafe().is_object())
    u.reasoning_output_tokens =
        int_at(d.value_unsafe().get_object().value_unsafe(), "reasoning_tokens").value_or(0);
  return u;
}

// Appends a fragment that may be a repeat of what we already have (some providers resend the
// whole id or name on every chunk) or a continuation of it.
void merge_fragment(std::string& have, std::string_view fragment) {
  if (fragment.empty() || have == fragment) return;
  if (!have.empty() && fragment.size() > have.size() && fragment.substr(0, have.size()) == have) {
    have.assign(fragment);  // cumulative resend
    return;
  }
  have.append(fragment);
}

}  // namespace

ChatStreamParser::Status ChatStreamParser::on_data(std::string_view data, std::vector<ModelEvent>& out) {
  if (done_) return Status::done;
  auto trimmed = data;
  while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\n')) trimmed.remove_prefix(1);
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\n')) trimmed.remove_suffix(1);
  if (trimmed == "[DONE]") {
    complete(out);
    return Status::done;
  }
  json::Element root;
  try {
    root = parser_.parse(trimmed);
  } catch (const json::DecodeError&) {
    return Status::more;  // a malformed event is skipped; the stream goes on
  }
  if (!root.is_object()) return Status::more;
  auto chunk = root.get_object().value_unsafe();
  if (auto err = chunk.at_key("error"); !err.error() && !err.value_unsafe().is_null()) {
    std::string message = "Unknown error";
    if (err.value_unsafe().is_object()) {
      auto m = err.value_unsafe().get_object().value_unsafe().at_key("message");
      if (!m.error() && m.value_unsafe().is_string()) message = std::string(m.value_unsafe().get_string().value_unsafe());
    } else if (err.value_unsafe().is_string()) {
      message = std::string(err.value_unsafe().get_string().value_unsafe());
    }
    error_ = fmt::format("unexpected status 200 OK: {}", message);
    return Status::error;
  }
  handle_chunk(chunk, out);
  return Status::more;
}

void ChatStreamParser::handle_chunk(json::Object chunk, std::vector<ModelEvent>& out) {
  if (auto u = chunk.at_key("usage"); !u.error() && u.value_unsafe().is_object())
    if (auto usage = read_usage(u.value_unsafe().get_object().value_unsafe())) usage_ = usage;

  auto choices = chunk.at_key("choices");
  if (choices.error() || !choices.value_unsafe().is_array()) return;
  auto arr = choices.value_unsafe().get_array().value_unsafe();
  if (arr.size() == 0) return;
  auto first = arr.at(0);
  if (first.error() || !first.value_unsafe().is_object()) return;
  auto choice = first.value_unsafe().get_object().value_unsafe();

  for (auto key : {"delta", "message"}) {
    auto d = choice.at_key(key);
    if (d.error() || !d.value_unsafe().is_object()) continue;
    auto delta = d.value_unsafe().get_object().value_unsafe();
    for (auto rkey : {"reasoning_content", "reasoning"}) {
      auto r = delta.at_key(rkey);
      if (r.error()) continue;
      auto piece = text_of(r.value_unsafe());
      if (piece.empty()) continue;
      reasoning_ += piece;
      out.push_back(ReasoningDelta{std::move(piece)});
      break;  // a provider sending both names means the same text twice (E5: no duplicates)
    }
    if (auto c = delta.at_key("content"); !c.error() && c.value_unsafe().is_string()) {
      std::string_view piece = c.value_unsafe().get_string().value_unsafe();
      if (!piece.empty()) {
        text_.append(piece);
        out.push_back(TextDelta{std::string(piece)});
      }
    }
    if (auto tc = delta.at_key("tool_calls"); !tc.error() && tc.value_unsafe().is_array()) {
      size_t position = 0;
      for (auto arr = tc.value_unsafe().get_array().value_unsafe(); auto call : arr) {
        if (call.is_object()) handle_tool_call(call.get_object().value_unsafe(), position);
        ++position;
      }
    }
  }

  auto fr = choice.at_key("finish_reason");
  if (!fr.error() && fr.value_unsafe().is_string()) {
    finish_reason_ = std::string(fr.value_unsafe().get_string().value_unsafe());
    if (finish_reason_.empty()) finish_reason_ = "stop";
    // Items are final now; keep reading for a trailing usage chunk (E4).
    flush_items(out);
  }
}

void ChatStreamParser::handle_tool_call(json::Object call, size_t position) {
  int64_t index = int_at(call, "index").value_or(static_cast<int64_t>(position));
  auto& pending = calls_[index];
  if (auto id = call.at_key("id"); !id.error() && id.value_unsafe().is_string())
    merge_fragment(pending.id, id.value_unsafe().get_string().value_unsafe());
  if (auto f = call.at_key("function"); !f.error() && f.value_unsafe().is_object()) {
    auto fn = f.value_unsafe().get_object().value_unsafe();
    if (auto n = fn.at_key("name"); !n.error() && n.value_unsafe().is_string())
      merge_fragment(pending.name, n.value_unsafe().get_string().value_unsafe());
    if (auto a = fn.at_key("arguments"); !a.error()) {
      if (a.value_unsafe().is_string())
        pending.arguments.append(a.value_unsafe().get_string().value_unsafe());
      else if (a.value_unsafe().is_object())  // some proxies send parsed arguments
        pending.arguments.append(json::to_text(a.value_unsafe()));
    }
  }
}

void ChatStreamParser::flush_items(std::vector<ModelEvent>& out) {
  if (items_flushed_) return;
  items_flushed_ = true;
  // The model's order: reasoning, then its text, then its tool calls by index (E3).
  if (!reasoning_.empty())
    out.push_back(ItemDone{ReasoningItem{{}, std::vector<ReasoningContent>{ReasoningText{reasoning_}}, {}}});
  if (!text_.empty()) out.push_back(ItemDone{assistant_message(text_)});
  for (auto& [index, call] : calls_) {
    if (call.name.empty() && call.arguments.empty()) continue;
    std::string id = call.id.empty() ? fmt::format("{}_{}", prefix_, index) : call.id;
    out.push_back(ItemDone{FunctionCallItem{call.name, call.arguments.empty() ? "{}" : call.arguments, id}});
  }
}

void ChatStreamParser::complete(std::vector<ModelEvent>& out) {
  flush_items(out);
  out.push_back(Completed{usage_, finish_reason_});
  done_ = true;
}

ChatStreamParser::Status ChatStreamParser::on_end(std::vector<ModelEvent>& out) {
  if (done_) return Status::done;
  if (!finish_reason_.empty()) {  // finished, no [DONE]: many servers just close
    complete(out);
    return Status::done;
  }
  error_ = "stream disconnected before completion: stream closed before response.completed";
  return Status::error;
}

}  // namespace llmx
