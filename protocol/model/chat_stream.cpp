#include "protocol/model/chat_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "protocol/base/json_writer.hpp"

namespace llmx {

namespace {

// A string field, or the `text` / `content` of an object (providers differ in reasoning shape).
std::string text_of(json::Element e) {
  if (e.is_string()) return std::string(e.get_string().value_unsafe());
  if (e.is_object()) {
    auto o = e.get_object().value_unsafe();
    for (auto key : {"text", "content"})
      if (auto s = json::string_if(o, key)) return std::string(*s);
  }
  return {};
}

std::optional<TokenUsage> read_usage(json::Object usage) {
  auto prompt = json::int_if(usage, "prompt_tokens");
  auto completion = json::int_if(usage, "completion_tokens");
  auto total = json::int_if(usage, "total_tokens");
  if (!prompt || !completion) return std::nullopt;
  TokenUsage u;
  u.input_tokens = *prompt;
  u.output_tokens = *completion;
  u.total_tokens = total.value_or(*prompt + *completion);
  if (auto d = json::object_if(usage, "prompt_tokens_details")) u.cached_input_tokens = json::int_if(*d, "cached_tokens").value_or(0);
  // Anthropic via LiteLLM reports cache reads at the top level, DeepSeek as cache hits.
  for (auto key : {"cache_read_input_tokens", "prompt_cache_hit_tokens"})
    if (u.cached_input_tokens == 0) u.cached_input_tokens = json::int_if(usage, key).value_or(0);
  if (auto d = json::object_if(usage, "completion_tokens_details"))
    u.reasoning_output_tokens = json::int_if(*d, "reasoning_tokens").value_or(0);
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

bool same_or_cumulative(std::string_view a, std::string_view b) {
  return a.starts_with(b) || b.starts_with(a);
}

bool is_complete_json(std::string_view text) {
  if (text.empty()) return false;
  json::Parser p;  // not the chunk's parser: its document is still in use
  try {
    p.parse(text);
    return true;
  } catch (const json::DecodeError&) {
    return false;
  }
}

bool contains_any(std::string_view haystack, std::initializer_list<std::string_view> needles) {
  for (auto n : needles)
    if (haystack.find(n) != std::string_view::npos) return true;
  return false;
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
  // An empty text is left to the parse: a chunk may carry its text under another key then.
  if (auto piece = shape_.text_of(trimmed, parser_); piece && !piece->empty()) {
    ++shape_reads_;
    if (shape_reasoning_) {
      reasoning_ += *piece;
      out.push_back(ReasoningDelta{std::move(*piece)});
    } else {
      text_ += *piece;
      out.push_back(TextDelta{std::move(*piece)});
    }
    return Status::more;
  }
  std::string repaired;
  auto root = json::parse_repairing_utf8(parser_, trimmed, repaired);
  if (!root || !root->is_object()) return Status::more;  // garbage is skipped, the stream goes on
  auto chunk = root->get_object().value_unsafe();
  if (auto err = chunk.at_key("error"); !err.error() && !err.value_unsafe().is_null()) {
    handle_error(err.value_unsafe());
    return Status::error;
  }
  size_t before = out.size();
  handle_chunk(chunk, out);
  if (shape_trials_ > 0 && repaired.empty() && out.size() == before + 1) learn_shape(trimmed, out.back());
  return Status::more;
}

void ChatStreamParser::learn_shape(std::string_view chunk, const ModelEvent& produced) {
  const auto* r = produced.get_if<ReasoningDelta>();
  const auto* t = produced.get_if<TextDelta>();
  if (!r && !t) return;
  bool reasoning = r != nullptr;
  const std::string& text = reasoning ? r->text : t->text;
  --shape_trials_;
  static constexpr std::string_view text_keys[] = {"content"};
  static constexpr std::string_view reasoning_keys[] = {"reasoning_content", "reasoning"};
  // The candidate must hold the text this chunk yielded: a chunk may have both reasoning keys.
  for (auto key : reasoning ? std::span<const std::string_view>(reasoning_keys) : std::span<const std::string_view>(text_keys))
    if (shape_.learn(chunk, key) && shape_.text_of(chunk, parser_) == text && proves_shape(reasoning)) {
      shape_reasoning_ = reasoning;
      return;
    }
  shape_.forget();
}

// Two chunks of the candidate shape with different texts (one with escapes) must each yield
// exactly that text and change nothing else. Two, so that a text found elsewhere in the chunk
// cannot pass for the candidate's.
bool ChatStreamParser::proves_shape(bool reasoning) const {
  static constexpr std::pair<std::string_view, std::string_view> probes[] = {
      {R"("probe one #")", "probe one #"}, {R"("probe \"two\" \u00e9 #")", "probe \"two\" \u00e9 #"}};
  for (auto [token, text] : probes) {
    ChatStreamParser probe(prefix_);
    probe.shape_trials_ = 0;
    std::vector<ModelEvent> got;
    if (probe.on_data(shape_.with_token(token), got) != Status::more || got.size() != 1) return false;
    const auto* r = got[0].get_if<ReasoningDelta>();
    const auto* t = got[0].get_if<TextDelta>();
    bool yields = reasoning ? r && r->text == text && probe.reasoning_ == text && probe.text_.empty()
                            : t && t->text == text && probe.text_ == text && probe.reasoning_.empty();
    if (!yields || probe.saw_finish_reason() || probe.usage_ || !probe.calls_.empty() || !probe.thinking_.empty())
      return false;
  }
  return true;
}

void ChatStreamParser::handle_error(json::Element err) {
  std::string message = "Unknown error";
  std::string code, type;
  if (err.is_object()) {
    auto o = err.get_object().value_unsafe();
    if (auto m = json::string_if(o, "message")) message = std::string(*m);
    if (auto t = json::string_if(o, "type")) type = std::string(*t);
    if (auto c = json::string_if(o, "code")) code = std::string(*c);
    if (auto n = json::int_if(o, "code")) code = std::to_string(*n);
  } else if (err.is_string()) {
    message = std::string(err.get_string().value_unsafe());
  }
  // Rate limits, overload (Anthropic's 529) and server errors pass; a bad request does not.
  int64_t numeric = 0;
  if (!code.empty() && code.find_first_not_of("0123456789") == std::string::npos) numeric = std::stoll(code.substr(0, 9));
  error_retryable_ = numeric == 429 || numeric >= 500 ||
                     contains_any(type + " " + code, {"rate_limit", "overloaded", "server_error", "internal_error",
                                                      "timeout", "unavailable", "api_error"});
  error_ = fmt::format("unexpected status 200 OK: {}", message);
}

void ChatStreamParser::handle_chunk(json::Object chunk, std::vector<ModelEvent>& out) {
  if (auto u = json::object_if(chunk, "usage"))
    if (auto usage = read_usage(*u)) usage_ = usage;

  auto choices = chunk.at_key("choices");
  if (choices.error() || !choices.value_unsafe().is_array()) return;
  auto arr = choices.value_unsafe().get_array().value_unsafe();
  if (arr.size() == 0) return;  // Azure's prompt_filter_results chunk, usage-only chunks
  auto first = arr.at(0);
  if (first.error() || !first.value_unsafe().is_object()) return;
  auto choice = first.value_unsafe().get_object().value_unsafe();

  for (auto key : {"delta", "message"})
    if (auto d = json::object_if(choice, key)) handle_delta(*d, out);

  if (auto fr = json::string_if(choice, "finish_reason")) {
    finish_reason_ = fr->empty() ? std::string("stop") : std::string(*fr);
    // Items are final now; keep reading for a trailing usage chunk (E4).
    flush_items(out);
  }
}

void ChatStreamParser::handle_delta(json::Object delta, std::vector<ModelEvent>& out) {
  bool reasoning_seen = false;
  for (auto rkey : {"reasoning_content", "reasoning"}) {
    auto r = delta.at_key(rkey);
    if (r.error() || r.value_unsafe().is_null()) continue;
    reasoning_seen = true;
    auto piece = text_of(r.value_unsafe());
    if (piece.empty()) continue;
    reasoning_ += piece;
    out.push_back(ReasoningDelta{std::move(piece)});
    break;  // a provider sending both names means the same text twice (E5: no duplicates)
  }
  if (auto tb = delta.at_key("thinking_blocks"); !tb.error() && tb.value_unsafe().is_array())
    for (auto arr = tb.value_unsafe().get_array().value_unsafe(); auto block : arr)
      if (block.is_object()) handle_thinking_block(block.get_object().value_unsafe(), reasoning_seen, out);
  if (auto piece = json::string_if(delta, "content"); piece && !piece->empty()) {
    text_.append(*piece);
    out.push_back(TextDelta{std::string(*piece)});
  }
  if (auto tc = delta.at_key("tool_calls"); !tc.error() && tc.value_unsafe().is_array()) {
    size_t position = 0;
    for (auto arr = tc.value_unsafe().get_array().value_unsafe(); auto call : arr) {
      if (call.is_object()) handle_tool_call(call.get_object().value_unsafe(), position);
      ++position;
    }
  }
}

void ChatStreamParser::handle_thinking_block(json::Object block, bool reasoning_seen, std::vector<ModelEvent>& out) {
  auto type = json::string_if(block, "type").value_or("thinking");
  if (type == "redacted_thinking") {
    ThinkingBlock b;
    b.type = "redacted_thinking";
    b.data = std::string(json::string_if(block, "data").value_or(""));
    thinking_.push_back(std::move(b));
    return;
  }
  auto piece = json::string_if(block, "thinking").value_or("");
  auto signature = json::string_if(block, "signature").value_or("");
  // A block is closed by its signature: thinking text after one starts the next block.
  if (thinking_.empty() || thinking_.back().type != "thinking" || (!thinking_.back().signature.empty() && !piece.empty()))
    thinking_.emplace_back();
  auto& b = thinking_.back();
  b.thinking.append(piece);
  merge_fragment(b.signature, signature);
  if (!reasoning_seen && !piece.empty()) {  // blocks without a reasoning_content copy
    reasoning_.append(piece);
    out.push_back(ReasoningDelta{std::string(piece)});
  }
}

void ChatStreamParser::handle_tool_call(json::Object call, size_t position) {
  int64_t index = json::int_if(call, "index").value_or(static_cast<int64_t>(position));
  auto id = json::string_if(call, "id").value_or("");
  auto fn = json::object_if(call, "function");
  std::string_view name = fn ? json::string_if(*fn, "name").value_or("") : std::string_view();
  std::optional<std::string> args;
  if (fn)
    if (auto a = fn->at_key("arguments"); !a.error()) {
      if (a.value_unsafe().is_string())
        args = std::string(a.value_unsafe().get_string().value_unsafe());
      else if (a.value_unsafe().is_object())  // some proxies send parsed arguments
        args = json::to_text(a.value_unsafe());
    }

  auto slot = slot_of_.find(index);
  bool open_new = slot == slot_of_.end();
  if (!open_new) {
    const auto& cur = calls_[slot->second];
    // Only once the call there is finished (its arguments parse) can a chunk start another one:
    // before that, a differing id is the next piece of a split id.
    bool other_id = !id.empty() && !cur.id.empty() && !same_or_cumulative(cur.id, id);
    bool whole_new_call = id.empty() && !name.empty() && args && !args->empty() && !cur.name.empty();
    open_new = (other_id || whole_new_call) && is_complete_json(cur.arguments);
  }
  if (open_new) {
    slot_of_[index] = calls_.size();
    calls_.emplace_back().index = index;
  }
  auto& pending = calls_[slot_of_[index]];
  merge_fragment(pending.id, id);
  merge_fragment(pending.name, name);
  if (args) pending.arguments.append(*args);
}

void ChatStreamParser::flush_items(std::vector<ModelEvent>& out) {
  if (items_flushed_) return;
  items_flushed_ = true;
  // The model's order: reasoning, then its text, then its tool calls (E3).
  if (!reasoning_.empty() || !thinking_.empty()) {
    ReasoningItem r{{}, std::vector<ReasoningContent>{ReasoningText{reasoning_}}, {}};
    bool passable = false;
    for (const auto& b : thinking_) passable |= !b.signature.empty() || !b.data.empty();
    if (passable) {
      json::Writer w;
      w.begin_array();
      for (const auto& b : thinking_) {
        w.begin_object().field("type", b.type);
        if (b.type == "redacted_thinking")
          w.field("data", b.data);
        else
          w.field("thinking", b.thinking).field("signature", b.signature);
        w.end_object();
      }
      w.end_array();
      r.encrypted_content = w.take();
    }
    out.push_back(ItemDone{std::move(r)});
  }
  if (!text_.empty()) out.push_back(ItemDone{assistant_message(text_)});
  // Index order (the model's order); calls that shared an index keep the order they opened in.
  std::stable_sort(calls_.begin(), calls_.end(), [](const PendingCall& a, const PendingCall& b) { return a.index < b.index; });
  for (size_t i = 0; i < calls_.size(); ++i) {
    auto& call = calls_[i];
    if (call.name.empty() && call.arguments.empty()) continue;
    std::string id = call.id.empty() ? fmt::format("{}_{}", prefix_, i) : call.id;
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
