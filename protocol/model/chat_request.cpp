#include "protocol/model/chat_request.hpp"

#include <set>
#include <unordered_map>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/text.hpp"

namespace llmx {

namespace {

bool is_valid_json(json::Parser& p, std::string_view text) {
  try {
    p.parse(text);
    return true;
  } catch (const json::DecodeError&) {
    return false;
  }
}

void cache_marker(json::Writer& w) {
  w.key("cache_control").begin_object().field("type", "ephemeral").end_object();
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// A message's text: the one part's own when it has one (nearly always), else its parts joined in
// `joined`. Saves a copy of every message for every request.
std::string_view text_of(const MessageItem& m, std::string& joined) {
  if (m.content.size() == 1) {
    if (auto t = m.content[0].get_if<InputText>()) return t->text;
    if (auto o = m.content[0].get_if<OutputText>()) return o->text;
  }
  joined = m.text();
  return joined;
}

// The same for a reasoning's text parts; empty without reasoning.
std::string_view text_of(const ReasoningItem* r, std::string& joined) {
  if (!r || !r->content) return {};
  if (r->content->size() == 1)
    if (auto t = (*r->content)[0].get_if<ReasoningText>()) return t->text;
  joined = r->content_text();
  return joined;
}

bool has_image(const MessageItem& m) {
  for (const auto& c : m.content)
    if (c.is<InputImage>()) return true;
  return false;
}

// One Chat message assembled from history items: a user/developer message, an assistant turn
// (its text and every tool call of the same response, which strict providers want in one
// message followed by one tool message per call), or one tool result.
struct ChatMessage {
  const MessageItem* message = nullptr;
  std::vector<const FunctionCallItem*> calls;
  const FunctionCallOutputItem* output = nullptr;
  const ReasoningItem* reasoning = nullptr;  // the reasoning that produced this assistant turn
  bool assistant() const { return !calls.empty() || (message && message->role == "assistant"); }
};
struct ChatMessagesTag {};

void assemble(const NormalizedHistory& history, std::vector<ChatMessage>& out) {
  reserve_rounded(out, history.size());
  std::string joined;
  const ReasoningItem* reasoning = nullptr;  // seen since the last message: a new response began
  for (const ResponseItem* it : history.items()) {
    if (auto r = it->get_if<ReasoningItem>()) {
      reasoning = r;
    } else if (auto m = it->get_if<MessageItem>()) {
      if (m->role == "system" || (blank(text_of(*m, joined)) && !has_image(*m))) continue;
      out.push_back(ChatMessage{m, {}, nullptr, m->role == "assistant" ? reasoning : nullptr});
      reasoning = nullptr;
    } else if (auto c = it->get_if<FunctionCallItem>()) {
      // Calls right after assistant text or other calls belong to the same response (a new
      // response always follows tool results or user input), even with reasoning between them
      // (interleaved thinking): strict providers want them in one message.
      if (!out.empty() && out.back().assistant()) {
        out.back().calls.push_back(c);
        if (!out.back().reasoning) out.back().reasoning = reasoning;
        reasoning = nullptr;
      } else {
        out.push_back(ChatMessage{nullptr, {c}, nullptr, reasoning});
        reasoning = nullptr;
      }
    } else if (auto o = it->get_if<FunctionCallOutputItem>()) {
      out.push_back(ChatMessage{nullptr, {}, o, nullptr});
    }
  }
}

// Whether the model name mentions a family ("anthropic/claude-sonnet-4" mentions "claude").
bool model_is(const std::string& model, std::string_view family) {
  return text::lower(model).find(family) != std::string::npos;
}

// By the provider's setting, else by the model's name or, for an alias, the name it stands for.
ReasoningPassback passback_for(const Prompt& prompt, const ModelProviderInfo& provider) {
  if (provider.reasoning_passback) return *provider.reasoning_passback;
  for (const auto* name : {&prompt.model, prompt.upstream ? &*prompt.upstream : nullptr}) {
    if (!name) continue;
    if (model_is(*name, "deepseek")) return ReasoningPassback::reasoning_content;
    if (model_is(*name, "claude")) return ReasoningPassback::thinking_blocks;
  }
  return ReasoningPassback::none;
}

// Signed Anthropic thinking blocks kept by the stream parser (a JSON array), if this reasoning
// has any.
std::optional<std::string_view> thinking_blocks(const ReasoningItem* r) {
  if (!r || !r->encrypted_content || !r->encrypted_content->starts_with("[")) return std::nullopt;
  return std::string_view(*r->encrypted_content);
}

void write_user_content(json::Writer& w, const MessageItem& m) {
  if (!has_image(m)) {
    std::string joined;
    w.field("content", text_of(m, joined));
    return;
  }
  w.key("content").begin_array();
  for (const auto& c : m.content) {
    if (auto t = c.get_if<InputText>()) {
      if (blank(t->text)) continue;
      w.begin_object().field("type", "text").field("text", t->text).end_object();
    } else if (auto o = c.get_if<OutputText>()) {
      w.begin_object().field("type", "text").field("text", o->text).end_object();
    } else if (auto img = c.get_if<InputImage>()) {
      w.begin_object().field("type", "image_url");
      w.key("image_url").begin_object().field("url", img->image_url).end_object();
      w.end_object();
    }
  }
  w.end_array();
}

// `passback`: which reasoning field this assistant message carries (already decided per message).
void write_message(json::Writer& w, const ChatMessage& msg, ReasoningPassback passback, bool mark) {
  w.begin_object();
  if (msg.output) {
    w.field("role", "tool").field("tool_call_id", msg.output->call_id).field("content", msg.output->output);
  } else if (!msg.assistant()) {
    w.field("role", msg.message->role);
    write_user_content(w, *msg.message);
  } else {
    w.field("role", "assistant");
    std::string joined;
    std::string_view text = msg.message ? text_of(*msg.message, joined) : std::string_view();
    if (text.empty() && !msg.calls.empty())
      w.key("content").null();
    else
      w.field("content", text);
    if (!msg.calls.empty()) {
      w.key("tool_calls").begin_array();
      for (const auto* c : msg.calls) {
        w.begin_object().field("id", c->call_id).field("type", "function");
        w.key("function").begin_object().field("name", c->name).field("arguments", c->arguments).end_object();
        w.end_object();
      }
      w.end_array();
    }
    std::string joined_reasoning;
    std::string_view reasoning = text_of(msg.reasoning, joined_reasoning);
    switch (passback) {
      case ReasoningPassback::reasoning_content:
        w.field("reasoning_content", reasoning);
        break;
      case ReasoningPassback::thinking_blocks:
        if (auto blocks = thinking_blocks(msg.reasoning)) w.key("thinking_blocks").raw(*blocks);
        break;
      case ReasoningPassback::reasoning:
        if (!reasoning.empty()) w.field("reasoning", reasoning);
        break;
      case ReasoningPassback::none:
        break;
    }
  }
  if (mark) cache_marker(w);
  w.end_object();
}

// Which messages carry their reasoning back, and how (E5).
std::vector<ReasoningPassback> passbacks(const std::vector<ChatMessage>& msgs, ReasoningPassback mode) {
  std::vector<ReasoningPassback> out(msgs.size(), ReasoningPassback::none);
  if (mode == ReasoningPassback::none) return out;
  size_t after = 0;  // the reference's anchors: only after the last user message, never when it is last
  if (mode == ReasoningPassback::reasoning) {
    for (size_t i = 0; i < msgs.size(); ++i)
      if (msgs[i].message && msgs[i].message->role == "user") after = i + 1;
    if (after == msgs.size()) return out;
  }
  // DeepSeek wants the field on every assistant message of a user turn that called tools
  // (empty when nothing was recorded) and rejects it elsewhere on older models; Anthropic wants
  // signed blocks wherever they exist.
  std::vector<bool> tool_turn(msgs.size(), mode != ReasoningPassback::reasoning_content);
  for (size_t begin = 0; begin < msgs.size();) {
    size_t end = begin + 1;
    while (end < msgs.size() && !(msgs[end].message && msgs[end].message->role == "user")) ++end;
    bool calls = false;
    for (size_t i = begin; i < end; ++i) calls |= !msgs[i].calls.empty();
    for (size_t i = begin; i < end; ++i) tool_turn[i] = tool_turn[i] || calls;
    begin = end;
  }
  for (size_t i = after; i < msgs.size(); ++i)
    if (msgs[i].assistant() && tool_turn[i]) out[i] = mode;
  return out;
}

}  // namespace

NormalizedHistory normalize_history(const History& items) {
  NormalizedHistory out;
  auto& kept = out.items_.items;
  reserve_rounded(kept, items.size() + 2);
  auto make = [&](ResponseItem item) { kept.push_back(&out.made_.emplace_back(std::move(item))); };
  json::Parser parser;
  // Call ids point into the items, kept or made, which outlive this function.
  std::set<std::string_view> answered;
  std::vector<std::string_view> open_calls;  // calls waiting for their output, in order
  auto close_open_calls = [&] {
    for (auto id : open_calls)
      if (!answered.count(id)) {
        make(FunctionCallOutputItem{std::string(id), "aborted"});
        answered.insert(id);
      }
    open_calls.clear();
  };
  for (const auto& it : items) {
    if (auto c = it.get_if<FunctionCallItem>()) {
      // Arguments that are not JSON would make strict providers reject the whole request; the
      // call is kept with empty arguments so the model still sees the error its output explains.
      if (is_valid_json(parser, c->arguments))
        kept.push_back(&it);
      else
        make(FunctionCallItem{c->name, "{}", c->call_id});
      open_calls.push_back(c->call_id);
      answered.erase(c->call_id);
    } else if (auto o = it.get_if<FunctionCallOutputItem>()) {
      bool pending = std::find(open_calls.begin(), open_calls.end(), o->call_id) != open_calls.end();
      if (!pending || answered.count(o->call_id)) continue;  // orphan or duplicate output
      kept.push_back(&it);
      answered.insert(o->call_id);
    } else {
      // Anything else ends the run of tool calls: outputs still missing are synthesised first.
      if (!open_calls.empty() && it.is<MessageItem>()) close_open_calls();
      kept.push_back(&it);
    }
  }
  close_open_calls();
  return out;
}

bool wants_prompt_cache(const std::string& model, const ModelProviderInfo& provider) {
  if (provider.prompt_cache) return *provider.prompt_cache;
  return model_is(model, "claude");
}

std::string build_chat_request(const Prompt& prompt, const ModelProviderInfo& provider) {
  bool cache = prompt.cache_markers.value_or(wants_prompt_cache(prompt.model, provider));
  auto history = normalize_history(prompt.input);
  KeptVector<ChatMessagesTag, ChatMessage, 4096> messages;  // 48 bytes an item: 50 KB for a long history
  auto& msgs = messages.items;
  assemble(history, msgs);
  auto reasoning = passbacks(msgs, passback_for(prompt, provider));
  // Anthropic history marker: the message at index len-4 of the full array (system included).
  size_t total = msgs.size() + 1;
  size_t marked = total > 4 ? total - 4 : SIZE_MAX;

  json::ScratchWriter w;
  w.begin_object();
  w.field("model", prompt.model);
  w.key("messages").begin_array();
  w.begin_object().field("role", "system").field("content", prompt.instructions);
  if (cache) cache_marker(w);
  w.end_object();
  for (size_t i = 0; i < msgs.size(); ++i) write_message(w, msgs[i], reasoning[i], cache && i + 1 == marked);
  w.end_array();
  w.field("stream", true);
  if (provider.include_usage)
    w.key("stream_options").begin_object().field("include_usage", true).end_object();
  if (!prompt.tools.empty()) {
    w.key("tools").begin_array();
    for (size_t i = 0; i < prompt.tools.size(); ++i) {
      const auto& t = prompt.tools[i];
      w.begin_object().field("type", "function");
      w.key("function").begin_object().field("name", t.name).field("description", t.description);
      w.key("parameters").raw(t.parameters.text);
      w.end_object();
      if (cache && i + 1 == prompt.tools.size()) cache_marker(w);
      w.end_object();
    }
    w.end_array();
    if (prompt.parallel_tool_calls) w.field("parallel_tool_calls", true);
  }
  if (prompt.output_schema) {
    w.key("response_format").begin_object().field("type", "json_schema");
    w.key("json_schema").begin_object().field("name", "llmx_output_schema").field("strict", true);
    w.key("schema").raw(prompt.output_schema->text).end_object().end_object();
  }
  if (prompt.chat_reasoning_effort) w.field("reasoning_effort", *prompt.chat_reasoning_effort);
  auto max_tokens = provider.max_tokens.value_or(20480);
  if (prompt.output_cap) max_tokens = std::min(max_tokens, *prompt.output_cap);
  w.field("max_tokens", max_tokens);
  w.end_object();
  return w.take_exact();
}

}  // namespace llmx
