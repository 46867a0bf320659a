#include "protocol/core/items.hpp"

#include "protocol/base/base64.hpp"
#include "protocol/base/files.hpp"

namespace llmx {

std::optional<std::string> image_data_url(const std::string& path) {
  constexpr size_t kMaxImageBytes = 20u << 20;
  auto bytes = files::read(path);
  if (!bytes || bytes->empty() || bytes->size() > kMaxImageBytes) return std::nullopt;
  std::string_view b(*bytes);
  std::string_view mime;
  if (b.starts_with("\x89PNG\r\n\x1a\n"))
    mime = "image/png";
  else if (b.starts_with("\xff\xd8\xff"))
    mime = "image/jpeg";
  else if (b.starts_with("GIF87a") || b.starts_with("GIF89a"))
    mime = "image/gif";
  else if (b.size() > 12 && b.starts_with("RIFF") && b.substr(8, 4) == "WEBP")
    mime = "image/webp";
  else
    return std::nullopt;
  return "data:" + std::string(mime) + ";base64," + base64::encode(b);
}

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
    else if (auto local = i.get_if<LocalImageInput>()) {
      if (auto url = image_data_url(local->path))
        m.content.push_back(InputImage{std::move(*url)});
      else  // unreadable or not an image: the model is told which file it was
        m.content.push_back(InputText{"[local image: " + local->path + "]"});
    }
  }
  return m;
}

}  // namespace llmx
