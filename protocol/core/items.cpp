#include "protocol/core/items.hpp"

#include "protocol/base/base64.hpp"
#include "protocol/base/files.hpp"

#include <fstream>

namespace llmx {

namespace {

constexpr size_t kMaxImageBytes = 20u << 20;

// The type of an image from its first bytes ("" when it is none the providers take).
std::string_view mime_of(std::string_view b) {
  if (b.starts_with("\x89PNG\r\n\x1a\n")) return "image/png";
  if (b.starts_with("\xff\xd8\xff")) return "image/jpeg";
  if (b.starts_with("GIF87a") || b.starts_with("GIF89a")) return "image/gif";
  if (b.size() > 12 && b.starts_with("RIFF") && b.substr(8, 4) == "WEBP") return "image/webp";
  return {};
}

}  // namespace

std::optional<std::string_view> image_type(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = static_cast<size_t>(in.tellg());
  if (size == 0 || size > kMaxImageBytes) return std::nullopt;
  std::string head(16, '\0');
  in.seekg(0);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  auto mime = mime_of(head);
  return mime.empty() ? std::nullopt : std::optional<std::string_view>(mime);
}

std::optional<std::string> image_data_url(const std::string& path) {
  auto bytes = files::read(path);
  if (!bytes || bytes->empty() || bytes->size() > kMaxImageBytes) return std::nullopt;
  auto mime = mime_of(*bytes);
  if (mime.empty()) return std::nullopt;
  return "data:" + std::string(mime) + ";base64," + base64::encode(*bytes);
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
