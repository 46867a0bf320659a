// Parsing of an OpenAI Chat Completions request into the few facts the mock needs, and of the
// `@mock:NAME key=value ...` directive that selects a scenario.
#pragma once

#include <simdjson.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mockllm {

struct Message {
  std::string role;
  std::string text; // string content, or the concatenated text parts of array content
};

struct Directive {
  std::string name;                          // scenario name, e.g. "shell"
  std::map<std::string, std::string> params; // key=value tokens after the name
  std::string raw;                           // exact directive text, the key for times= counters
  size_t begin = 0, end = 0;                 // span within the message text (for echo)

  std::optional<std::string> param(const std::string &key) const;
  // Integer parameter clamped to [lo, hi]; `fallback` when absent or not a number.
  long long int_param(const std::string &key, long long fallback, long long lo,
                      long long hi) const;
};

struct ChatRequest {
  std::string model = "mock-model";
  bool stream = false;
  bool include_usage = false;
  std::vector<Message> messages;
  size_t content_chars = 0; // bytes of all message contents, for prompt_tokens
  // Came in on POST /v1/responses: a few scenarios (context_length) fail differently there.
  bool responses_wire = false;

  std::vector<std::string> tools;  // names of the tools offered (both wires)
  // A value of the structured output the request asks for (`response_format` / `text.format`
  // with a `json_schema`); empty when it asks for none.
  std::string schema_answer;

  bool after_tool() const { return !messages.empty() && messages.back().role == "tool"; }
  const Message *last_with_role(std::string_view role) const;
};

// The root object of a JSON request body (valid until this thread parses another one); nullopt
// with `error` set when the body is not a JSON object. `compact` receives the minified body (for
// recording) whenever the body is valid JSON.
std::optional<simdjson::dom::object> parse_body(const std::string &body, std::string &compact,
                                                std::string &error);

// Parses the JSON body. On failure returns nullopt and fills `error` with a human message.
// `compact` receives the minified body (for recording) whenever the body is valid JSON.
std::optional<ChatRequest> parse_chat_request(const std::string &body, std::string &compact,
                                              std::string &error);

// The names of the tools a request offers: `tools[].function.name` (Chat) or `tools[].name`
// (Responses).
std::vector<std::string> offered_tools(simdjson::dom::object root);

// What both wires spell alike: model, stream, the tools offered, the structured-output answer.
void read_common_fields(simdjson::dom::object root, ChatRequest &req);

// The answer a request for structured output gets: a value of its schema ("" when none).
std::string structured_answer(simdjson::dom::object root);

// Finds the first `@mock:NAME ...` directive in `text`.
std::optional<Directive> find_directive(std::string_view text);

// The directive of the LAST user message that carries one.
std::optional<Directive> select_directive(const ChatRequest &req);

// `text` with the directive span removed and the result trimmed (the echo scenario's answer).
std::string strip_directive(std::string_view text);

} // namespace mockllm
