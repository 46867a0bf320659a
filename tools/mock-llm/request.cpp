#include "tools/mock-llm/request.hpp"

#include "tools/mock-llm/schema_value.hpp"
#include "tools/mock-llm/text_util.hpp"

#include <simdjson.h>

#include <charconv>

namespace mockllm {
namespace {

constexpr std::string_view kPrefix = "@mock:";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool is_key_char(char c) { return is_name_char(c) && c != '-'; }

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Keys whose value runs to the end of the line, so shell commands may contain spaces.
bool is_rest_of_line_key(std::string_view key) { return key == "cmd" || key == "argv" || key == "text" || key == "args"; }

// Text of a message's `content`: a string, or the `text` of every {type:"text"} part.
std::string content_text(simdjson::dom::element content) {
  std::string out;
  std::string_view sv;
  if (content.get_string().get(sv) == simdjson::SUCCESS) {
    out.assign(sv);
    return out;
  }
  simdjson::dom::array parts;
  if (content.get_array().get(parts) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element part : parts) {
    std::string_view piece;
    if (part.get_string().get(piece) == simdjson::SUCCESS) { // tolerate bare strings
      out.append(piece);
      continue;
    }
    std::string_view type;
    if (part["type"].get_string().get(type) == simdjson::SUCCESS && type != "text") continue;
    if (part["text"].get_string().get(piece) == simdjson::SUCCESS) out.append(piece);
  }
  return out;
}

} // namespace

std::optional<std::string> Directive::param(const std::string &key) const {
  auto it = params.find(key);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

long long Directive::int_param(const std::string &key, long long fallback, long long lo,
                               long long hi) const {
  auto v = param(key);
  if (!v) return fallback;
  long long n = 0;
  const char *b = v->data();
  const char *e = b + v->size();
  auto [ptr, ec] = std::from_chars(b, e, n);
  if (ec != std::errc() || ptr != e) return fallback;
  return n < lo ? lo : (n > hi ? hi : n);
}

std::vector<std::string> offered_tools(simdjson::dom::object root) {
  std::vector<std::string> names;
  simdjson::dom::array tools;
  if (root["tools"].get_array().get(tools) != simdjson::SUCCESS) return names;
  for (simdjson::dom::element t : tools) {
    std::string_view name;
    if (t["function"]["name"].get_string().get(name) == simdjson::SUCCESS ||
        t["name"].get_string().get(name) == simdjson::SUCCESS)
      names.emplace_back(name);
  }
  return names;
}

void read_common_fields(simdjson::dom::object root, ChatRequest &req) {
  std::string_view model;
  if (root["model"].get_string().get(model) == simdjson::SUCCESS && !model.empty()) req.model = model;
  req.tools = offered_tools(root);
  req.schema_answer = structured_answer(root);
  bool stream = false;
  if (root["stream"].get_bool().get(stream) == simdjson::SUCCESS) req.stream = stream;
}

std::string structured_answer(simdjson::dom::object root) {
  simdjson::dom::element schema;
  if (root["response_format"]["json_schema"]["schema"].get(schema) == simdjson::SUCCESS ||
      root["text"]["format"]["schema"].get(schema) == simdjson::SUCCESS)
    return value_for_schema(schema);
  return {};
}

const Message *ChatRequest::last_with_role(std::string_view role) const {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it)
    if (it->role == role) return &*it;
  return nullptr;
}

std::optional<simdjson::dom::object> parse_body(const std::string &body, std::string &compact,
                                                std::string &error) {
  // One parser per thread: parsers are not thread-safe and reallocating per request is waste.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(body).get(doc); err) {
    error = std::string("request body is not valid JSON: ") + simdjson::error_message(err);
    return std::nullopt;
  }
  // Record the body as sent, minus whitespace, keeping original number spellings.
  compact.assign(body.size() + simdjson::SIMDJSON_PADDING, '\0');
  size_t compact_len = 0;
  if (simdjson::minify(body.data(), body.size(), compact.data(), compact_len) ==
      simdjson::SUCCESS) {
    compact.resize(compact_len);
  } else {
    compact = simdjson::minify(doc);
  }
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) {
    error = "request body must be a JSON object";
    return std::nullopt;
  }
  return root;
}

std::optional<ChatRequest> parse_chat_request(const std::string &body, std::string &compact,
                                              std::string &error) {
  auto parsed = parse_body(body, compact, error);
  if (!parsed) return std::nullopt;
  simdjson::dom::object root = *parsed;
  ChatRequest req;
  read_common_fields(root, req);
  std::string_view sv;
  bool flag = false;
  if (root["stream_options"]["include_usage"].get_bool().get(flag) == simdjson::SUCCESS)
    req.include_usage = flag;

  simdjson::dom::array messages;
  if (root["messages"].get_array().get(messages) != simdjson::SUCCESS) {
    error = "'messages' must be an array";
    return std::nullopt;
  }
  for (simdjson::dom::element m : messages) {
    Message msg;
    if (m["role"].get_string().get(sv) == simdjson::SUCCESS) msg.role = sv;
    simdjson::dom::element content;
    if (m["content"].get(content) == simdjson::SUCCESS) msg.text = content_text(content);
    req.content_chars += msg.text.size();
    req.messages.push_back(std::move(msg));
  }
  return req;
}

std::optional<Directive> find_directive(std::string_view text) {
  size_t at = 0;
  while ((at = text.find(kPrefix, at)) != std::string_view::npos) {
    size_t i = at + kPrefix.size();
    size_t name_end = i;
    while (name_end < text.size() && is_name_char(text[name_end])) ++name_end;
    if (name_end == i) {
      at = i;
      continue;
    }
    Directive d;
    d.name = std::string(text.substr(i, name_end - i));
    d.begin = at;
    size_t end = name_end;
    size_t pos = name_end;
    // key=value tokens on the same line; the first token of another shape ends the directive.
    for (;;) {
      while (pos < text.size() && is_blank(text[pos])) ++pos;
      if (pos >= text.size() || text[pos] == '\n' || text[pos] == '\r') break;
      size_t key_end = pos;
      while (key_end < text.size() && is_key_char(text[key_end])) ++key_end;
      if (key_end == pos || key_end >= text.size() || text[key_end] != '=') break;
      std::string key(text.substr(pos, key_end - pos));
      size_t v = key_end + 1;
      size_t v_end = v;
      if (is_rest_of_line_key(key)) {
        while (v_end < text.size() && text[v_end] != '\n' && text[v_end] != '\r') ++v_end;
        std::string_view value = text.substr(v, v_end - v);
        while (!value.empty() && is_blank(value.back())) value.remove_suffix(1);
        v_end = v + value.size();
      } else {
        while (v_end < text.size() && !is_blank(text[v_end]) && text[v_end] != '\n' &&
               text[v_end] != '\r')
          ++v_end;
      }
      d.params[key] = std::string(text.substr(v, v_end - v));
      end = pos = v_end;
    }
    d.end = end;
    d.raw = std::string(text.substr(d.begin, d.end - d.begin));
    return d;
  }
  return std::nullopt;
}

std::optional<Directive> select_directive(const ChatRequest &req) {
  for (auto it = req.messages.rbegin(); it != req.messages.rend(); ++it) {
    if (it->role != "user") continue;
    if (auto d = find_directive(it->text)) return d;
  }
  return std::nullopt;
}

std::string strip_directive(std::string_view text) {
  auto d = find_directive(text);
  if (!d) return std::string(trim(text));
  std::string out(text.substr(0, d->begin));
  size_t rest = d->end;
  // Drop the blanks after the directive too, so "say @mock:echo hi" becomes "say hi".
  while (rest < text.size() && is_blank(text[rest])) ++rest;
  out.append(text.substr(rest));
  return std::string(trim(out));
}

} // namespace mockllm
