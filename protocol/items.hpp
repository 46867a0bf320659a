// Model-visible conversation items (protocol.md §5.5) and user input (§5.1): what history is
// made of, what rollouts store and what request builders turn into wire messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/caf_inspect.hpp"
#include "protocol/reflect.hpp"

namespace llmx {

// --- user input ---------------------------------------------------------------------------------

struct TextInput {
  static constexpr std::string_view kind = "text";
  std::string text;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("text", s.text);
  }
};

struct ImageInput {
  static constexpr std::string_view kind = "image";
  std::string image_url;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("image_url", s.image_url);
  }
};

struct LocalImageInput {
  static constexpr std::string_view kind = "local_image";
  std::string path;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("path", s.path);
  }
};

using UserInput = OneOf<TextInput, ImageInput, LocalImageInput>;

// --- content of a message item ------------------------------------------------------------------

struct InputText {
  static constexpr std::string_view kind = "input_text";
  std::string text;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("text", s.text);
  }
};

struct InputImage {
  static constexpr std::string_view kind = "input_image";
  std::string image_url;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("image_url", s.image_url);
  }
};

struct OutputText {
  static constexpr std::string_view kind = "output_text";
  std::string text;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("text", s.text);
  }
};

using ContentItem = OneOf<InputText, InputImage, OutputText>;

struct SummaryText {
  static constexpr std::string_view kind = "summary_text";
  std::string text;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("text", s.text);
  }
};

struct ReasoningText {
  static constexpr std::string_view kind = "reasoning_text";
  std::string text;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("text", s.text);
  }
};

using ReasoningSummary = OneOf<SummaryText>;
using ReasoningContent = OneOf<ReasoningText>;

// --- response items -----------------------------------------------------------------------------

struct MessageItem {
  static constexpr std::string_view kind = "message";
  std::string role;  // user | assistant | developer | system
  std::vector<ContentItem> content;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("role", s.role);
    v("content", s.content);
  }
  // Concatenation of every text content item, with no separator (engine.md §2.3.1).
  std::string text() const;
};

struct ReasoningItem {
  static constexpr std::string_view kind = "reasoning";
  std::vector<ReasoningSummary> summary;
  std::optional<std::vector<ReasoningContent>> content;
  Nullable<std::string> encrypted_content;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("summary", s.summary, Field::defaulted);
    v("content", s.content);
    v("encrypted_content", s.encrypted_content);
  }
  std::string content_text() const;
};

struct FunctionCallItem {
  static constexpr std::string_view kind = "function_call";
  std::string name;
  std::string arguments;  // JSON text, as the model produced it
  std::string call_id;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("name", s.name);
    v("arguments", s.arguments);
    v("call_id", s.call_id);
  }
};

struct FunctionCallOutputItem {
  static constexpr std::string_view kind = "function_call_output";
  std::string call_id;
  std::string output;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("call_id", s.call_id);
    v("output", s.output);
  }
};

using ResponseItem = OneOf<MessageItem, ReasoningItem, FunctionCallItem, FunctionCallOutputItem>;

// Helpers for building common items.
ResponseItem user_message(std::string text);
ResponseItem assistant_message(std::string text);
ResponseItem developer_message(std::string text);

// Text of a list of user inputs, concatenated without separator (the `user_message` event text).
std::string user_inputs_text(const std::vector<UserInput>& items);

// The history message recording some user input.
ResponseItem user_inputs_to_message(const std::vector<UserInput>& items);

}  // namespace llmx
