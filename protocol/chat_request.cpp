#include "protocol/chat_request.hpp"

#include <set>
#include <unordered_map>

#include "protocol/json_codec.hpp"

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

// One chat message per convertible history item; `mark` adds a cache_control marker.
void write_message(json::Writer& w, const ResponseItem& item, bool mark) {
  w.begin_object();
  if (auto m = item.get_if<MessageItem>()) {
    w.field("role", m->role);
    bool has_image = false;
    for (const auto& c : m->content) has_image |= c.is<InputImage>();
    if (!has_image) {
      w.field("content", m->text());
    } else {
      w.key("content").begin_array();
      for (const auto& c : m->content) {
        if (auto t = c.get_if<InputText>()) {
          if (t->text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
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
  } else if (auto call = item.get_if<FunctionCallItem>()) {
    w.field("role", "assistant");
    w.key("content").null();
    w.key("tool_calls").begin_array().begin_object();
    w.field("id", call->call_id).field("type", "function");
    w.key("function").begin_object().field("name", call->name).field("arguments", call->arguments).end_object();
    w.end_object().end_array();
  } else if (auto out = item.get_if<FunctionCallOutputItem>()) {
    w.field("role", "tool").field("tool_call_id", out->call_id).field("content", out->output);
  }
  if (mark) cache_marker(w);
  w.end_object();
}

bool convertible(const ResponseItem& item) {
  if (auto m = item.get_if<MessageItem>()) {
    if (m->role == "system") return false;
    bool has_image = false;
    for (const auto& c : m->content) has_image |= c.is<InputImage>();
    return has_image || m->text().find_first_not_of(" \t\r\n") != std::string::npos;
  }
  return item.is<FunctionCallItem>() || item.is<FunctionCallOutputItem>();
}

}  // namespace

std::vector<ResponseItem> normalize_history(const std::vector<ResponseItem>& items) {
  json::Parser parser;
  std::set<std::string> answered;
  std::vector<ResponseItem> out;
  out.reserve(items.size() + 2);
  std::vector<std::string> open_calls;  // calls waiting for their output, in order
  auto close_open_calls = [&] {
    for (auto& id : open_calls)
      if (!answered.count(id)) {
        out.push_back(FunctionCallOutputItem{id, "aborted"});
        answered.insert(id);
      }
    open_calls.clear();
  };
  for (const auto& it : items) {
    if (auto c = it.get_if<FunctionCallItem>()) {
      // Arguments that are not JSON would make strict providers reject the whole request; the
      // call is kept with empty arguments so the model still sees the error its output explains.
      if (is_valid_json(parser, c->arguments)) {
        out.push_back(it);
      } else {
        out.push_back(FunctionCallItem{c->name, "{}", c->call_id});
      }
      open_calls.push_back(c->call_id);
      answered.erase(c->call_id);
    } else if (auto o = it.get_if<FunctionCallOutputItem>()) {
      bool pending = std::find(open_calls.begin(), open_calls.end(), o->call_id) != open_calls.end();
      if (!pending || answered.count(o->call_id)) continue;  // orphan or duplicate output
      out.push_back(it);
      answered.insert(o->call_id);
    } else {
      // Anything else ends the run of tool calls: outputs still missing are synthesised first.
      if (!open_calls.empty() && it.is<MessageItem>()) close_open_calls();
      out.push_back(it);
    }
  }
  close_open_calls();
  return out;
}

bool wants_prompt_cache(const std::string& model, const ModelProviderInfo& provider) {
  if (provider.prompt_cache) return *provider.prompt_cache;
  std::string lower;
  for (char c : model) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower.find("claude") != std::string::npos;
}

std::string build_chat_request(const Prompt& prompt, const ModelProviderInfo& provider) {
  bool cache = wants_prompt_cache(prompt.model, provider);
  auto history = normalize_history(prompt.input);
  std::vector<const ResponseItem*> msgs;
  for (const auto& it : history)
    if (convertible(it)) msgs.push_back(&it);
  // Anthropic history marker: the message at index len-4 of the full array (system included).
  size_t total = msgs.size() + 1;
  size_t marked = total > 4 ? total - 4 : SIZE_MAX;

  json::Writer w;
  w.begin_object();
  w.field("model", prompt.model);
  w.key("messages").begin_array();
  w.begin_object().field("role", "system").field("content", prompt.instructions);
  if (cache) cache_marker(w);
  w.end_object();
  for (size_t i = 0; i < msgs.size(); ++i) write_message(w, *msgs[i], cache && i + 1 == marked);
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
  w.field("max_tokens", provider.max_tokens.value_or(20480));
  w.end_object();
  return w.take();
}

}  // namespace llmx
