#include "tools/mock-llm/responses_request.hpp"

#include <simdjson.h>

#include <string_view>

namespace mockllm {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Text of `content`/`output`: a string, or the text of every input_text/output_text/text part
// (images, files and refusals carry no text the scenarios look at).
std::string parts_text(simdjson::dom::element content) {
  std::string out;
  std::string_view sv;
  if (content.get_string().get(sv) == simdjson::SUCCESS) return std::string(sv);
  simdjson::dom::array parts;
  if (content.get_array().get(parts) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element part : parts) {
    std::string_view type;
    if (part["type"].get_string().get(type) == simdjson::SUCCESS && type != "input_text" &&
        type != "output_text" && type != "text")
      continue;
    if (part["text"].get_string().get(sv) == simdjson::SUCCESS) out.append(sv);
  }
  return out;
}

void add_message(ChatRequest &req, std::string role, std::string text) {
  req.content_chars += text.size();
  req.messages.push_back({std::move(role), std::move(text)});
}

// One element of `input`; false (with `error`) when it is not an object.
bool add_item(ChatRequest &req, simdjson::dom::element item, std::string &error) {
  simdjson::dom::object obj;
  if (item.get_object().get(obj) != simdjson::SUCCESS) {
    error = "'input' items must be objects";
    return false;
  }
  std::string_view type, role;
  const bool has_type = obj["type"].get_string().get(type) == simdjson::SUCCESS;
  const bool has_role = obj["role"].get_string().get(role) == simdjson::SUCCESS;
  simdjson::dom::element value;
  if ((!has_type && has_role) || type == "message") { // EasyInputMessage has no "type"
    std::string text;
    if (obj["content"].get(value) == simdjson::SUCCESS) text = parts_text(value);
    add_message(req, std::string(has_role ? role : "user"), std::move(text));
  } else if (ends_with(type, "_call_output")) {
    std::string text;
    if (obj["output"].get(value) == simdjson::SUCCESS) text = parts_text(value);
    add_message(req, "tool", std::move(text));
  } else if (ends_with(type, "_call")) {
    add_message(req, "assistant", {}); // the call itself, like a chat tool_calls message
  }
  return true;
}

} // namespace

std::optional<ChatRequest> parse_responses_request(const std::string &body, std::string &compact,
                                                   std::string &error) {
  auto parsed = parse_body(body, compact, error);
  if (!parsed) return std::nullopt;
  simdjson::dom::object root = *parsed;
  ChatRequest req;
  req.responses_wire = true;
  read_common_fields(root, req);
  std::string_view sv;
  if (root["instructions"].get_string().get(sv) == simdjson::SUCCESS && !sv.empty())
    add_message(req, "system", std::string(sv));

  simdjson::dom::element input;
  if (root["input"].get(input) != simdjson::SUCCESS) {
    error = "'input' is required";
    return std::nullopt;
  }
  if (input.get_string().get(sv) == simdjson::SUCCESS) { // a bare string is one user message
    add_message(req, "user", std::string(sv));
    return req;
  }
  simdjson::dom::array items;
  if (input.get_array().get(items) != simdjson::SUCCESS) {
    error = "'input' must be a string or an array";
    return std::nullopt;
  }
  for (simdjson::dom::element item : items)
    if (!add_item(req, item, error)) return std::nullopt;
  return req;
}

} // namespace mockllm
