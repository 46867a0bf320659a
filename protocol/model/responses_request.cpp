#include "protocol/model/responses_request.hpp"

#include <algorithm>

#include "protocol/base/json_writer.hpp"
#include "protocol/base/text.hpp"

namespace llmx {

namespace {

void write_content(json::Writer& w, const ContentItem& c) {
  w.begin_object();
  if (auto t = c.get_if<InputText>()) {
    w.field("type", "input_text").field("text", t->text);
  } else if (auto o = c.get_if<OutputText>()) {
    w.field("type", "output_text").field("text", o->text);
  } else if (auto img = c.get_if<InputImage>()) {
    w.field("type", "input_image").field("image_url", img->image_url);
  }
  w.end_object();
}

// Reasoning a stateless request can replay: Responses' own encrypted content (Anthropic thinking
// blocks kept from the Chat wire are JSON arrays and mean nothing here).
bool replayable(const ReasoningItem& r) {
  return r.encrypted_content && !r.encrypted_content->empty() && !r.encrypted_content->starts_with("[");
}

void write_item(json::Writer& w, const ResponseItem& item) {
  if (auto m = item.get_if<MessageItem>()) {
    w.begin_object().field("type", "message").field("role", m->role);
    w.key("content").begin_array();
    for (const auto& c : m->content) write_content(w, c);
    w.end_array().end_object();
  } else if (auto r = item.get_if<ReasoningItem>()) {
    w.begin_object().field("type", "reasoning");
    w.key("summary").begin_array();
    for (const auto& s : r->summary)
      if (auto t = s.get_if<SummaryText>()) w.begin_object().field("type", "summary_text").field("text", t->text).end_object();
    w.end_array();
    if (r->content && !r->content->empty()) {
      w.key("content").begin_array();
      for (const auto& c : *r->content)
        if (auto t = c.get_if<ReasoningText>())
          w.begin_object().field("type", "reasoning_text").field("text", t->text).end_object();
      w.end_array();
    }
    w.field("encrypted_content", *r->encrypted_content);
    w.end_object();
  } else if (auto c = item.get_if<FunctionCallItem>()) {
    w.begin_object().field("type", "function_call").field("name", c->name).field("arguments", c->arguments);
    w.field("call_id", c->call_id).end_object();
  } else if (auto o = item.get_if<FunctionCallOutputItem>()) {
    w.begin_object().field("type", "function_call_output").field("call_id", o->call_id);
    if (o->content_items) {
      w.key("output").begin_array();
      for (const auto& part : *o->content_items) {
        if (auto* t = part.get_if<InputText>())
          w.begin_object().field("type", "input_text").field("text", t->text).end_object();
        else if (auto* i = part.get_if<InputImage>())
          w.begin_object().field("type", "input_image").field("image_url", i->image_url).end_object();
      }
      w.end_array();
    } else {
      w.field("output", o->output);
    }
    w.end_object();
  }
}

}  // namespace

bool is_azure_provider(const ModelProviderInfo& provider) {
  if (text::lower(provider.name) == "azure") return true;
  auto url = text::lower(provider.base_url);
  for (auto marker : {"openai.azure.", "cognitiveservices.azure.", "aoai.azure.", "azure-api.", "azurefd."})
    if (url.find(marker) != std::string::npos) return true;
  return false;
}

std::string build_responses_request(const Prompt& prompt, const ModelProviderInfo& provider) {
  auto history = normalize_history(prompt.input);
  json::ScratchWriter w;
  w.begin_object();
  w.field("model", prompt.model);
  w.field("instructions", prompt.instructions);
  w.key("input").begin_array();
  for (const ResponseItem* it : history.items()) {
    if (auto r = it->get_if<ReasoningItem>(); r && !replayable(*r)) continue;
    if (auto m = it->get_if<MessageItem>(); m && m->role == "system") continue;
    write_item(w, *it);
  }
  w.end_array();
  w.key("tools").begin_array();
  for (const auto& t : prompt.tools) {
    w.begin_object().field("type", "function").field("name", t.name).field("description", t.description);
    w.field("strict", false);
    w.key("parameters").raw(t.parameters.text);
    w.end_object();
  }
  w.end_array();
  w.field("tool_choice", "auto");
  w.field("parallel_tool_calls", prompt.parallel_tool_calls);
  if (prompt.reasoning) {
    w.key("reasoning").begin_object();
    if (prompt.reasoning_effort) w.field("effort", *prompt.reasoning_effort);
    w.field("summary", prompt.reasoning_summary);
    w.end_object();
  } else {
    w.key("reasoning").null();
  }
  w.field("store", is_azure_provider(provider));
  w.field("stream", true);
  w.key("include").begin_array();
  if (prompt.reasoning) w.string("reasoning.encrypted_content");
  w.end_array();
  if (!prompt.conversation_id.empty()) w.field("prompt_cache_key", prompt.conversation_id);
  if (prompt.verbosity || prompt.output_schema) {
    w.key("text").begin_object();
    if (prompt.verbosity) w.field("verbosity", *prompt.verbosity);
    if (prompt.output_schema) {
      w.key("format").begin_object().field("type", "json_schema").field("name", "llmx_output_schema");
      w.field("strict", true).key("schema").raw(prompt.output_schema->text).end_object();
    }
    w.end_object();
  }
  if (provider.max_tokens)
    w.field("max_output_tokens", prompt.output_cap ? std::min(*provider.max_tokens, *prompt.output_cap) : *provider.max_tokens);
  if (prompt.cyber_access_program)
    w.key("access_programs").begin_object().field("cyber", *prompt.cyber_access_program).end_object();
  w.end_object();
  return w.take_exact();
}

}  // namespace llmx
