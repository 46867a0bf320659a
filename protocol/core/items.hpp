// Model-visible conversation items (protocol.md §5.5) and user input (§5.1): what history is
// made of, what rollouts store and what request builders turn into wire messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/base/caf_inspect.hpp"
#include "protocol/base/reflect.hpp"

namespace llmx {

// --- user input ---------------------------------------------------------------------------------

LLMX_TAGGED_STRING(TextInput, "text", text)
LLMX_TAGGED_STRING(ImageInput, "image", image_url)
LLMX_TAGGED_STRING(LocalImageInput, "local_image", path)

using UserInput = OneOf<TextInput, ImageInput, LocalImageInput>;

// --- content of a message item ------------------------------------------------------------------

LLMX_TAGGED_STRING(InputText, "input_text", text)
LLMX_TAGGED_STRING(InputImage, "input_image", image_url)
LLMX_TAGGED_STRING(OutputText, "output_text", text)

using ContentItem = OneOf<InputText, InputImage, OutputText>;

LLMX_TAGGED_STRING(SummaryText, "summary_text", text)
LLMX_TAGGED_STRING(ReasoningText, "reasoning_text", text)

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
  // The output as parts, when it holds images (an MCP tool's result): the Responses wire sends
  // these instead of the text; the Chat wire cannot and sends the text.
  std::optional<std::vector<ContentItem>> content_items = std::nullopt;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("call_id", s.call_id);
    v("output", s.output);
    v("content_items", s.content_items);
  }
};

using ResponseItem = OneOf<MessageItem, ReasoningItem, FunctionCallItem, FunctionCallOutputItem>;

// Helpers for building common items.
ResponseItem user_message(std::string text);
ResponseItem assistant_message(std::string text);
ResponseItem developer_message(std::string text);

// Text of a list of user inputs, concatenated without separator (the `user_message` event text).
std::string user_inputs_text(const std::vector<UserInput>& items);

// A local image as a data URL (its type from the file's first bytes), or nullopt when it cannot
// be read or is not an image the providers take (PNG, JPEG, GIF, WebP up to 20 MiB).
std::optional<std::string> image_data_url(const std::string& path);
// The same check from the file's size and first bytes only (`image/png` ...), for callers that
// validate a path long before the image is sent.
std::optional<std::string_view> image_type(const std::string& path);

// The history message recording some user input.
ResponseItem user_inputs_to_message(const std::vector<UserInput>& items);

}  // namespace llmx
