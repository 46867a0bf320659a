#include "protocol/core/items.hpp"

namespace llmx {

std::string MessageItem::text() const {
  std::string out;
  for (const auto& c : content) {
    if (auto t = c.get_if<InputText>())
      out += t->text;
    else if (auto o = c.get_if<OutputText>())
      out += o->text;
  }
  return out;
}

std::string ReasoningItem::content_text() const {
  std::string out;
  if (content)
    for (const auto& c : *content)
      if (auto t = c.get_if<ReasoningText>()) out += t->text;
  return out;
}

ResponseItem user_message(std::string text) {
  return MessageItem{"user", {InputText{std::move(text)}}};
}

ResponseItem assistant_message(std::string text) {
  return MessageItem{"assistant", {OutputText{std::move(text)}}};
}

ResponseItem developer_message(std::string text) {
  return MessageItem{"developer", {InputText{std::move(text)}}};
}

std::string user_inputs_text(const std::vector<UserInput>& items) {
  std::string out;
  for (const auto& i : items)
    if (auto t = i.get_if<TextInput>()) out += t->text;
  return out;
}

ResponseItem user_inputs_to_message(const std::vector<UserInput>& items) {
  MessageItem m{"user", {}};
  for (const auto& i : items) {
    if (auto t = i.get_if<TextInput>())
      m.content.push_back(InputText{t->text});
    else if (auto img = i.get_if<ImageInput>())
      m.content.push_back(InputImage{img->image_url});
    else if (auto local = i.get_if<LocalImageInput>())
      m.content.push_back(InputText{"[local image: " + local->path + "]"});
  }
  return m;
}

}  // namespace llmx
