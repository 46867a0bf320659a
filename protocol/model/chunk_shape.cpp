#include "protocol/model/chunk_shape.hpp"

#include "protocol/base/utf8.hpp"

namespace llmx {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

bool ChunkShape::learn(std::string_view chunk, std::string_view key) {
  known_ = false;
  std::string needle;
  needle.reserve(key.size() + 2);
  needle.append(1, '"').append(key).append(1, '"');
  auto at = chunk.find(needle);
  if (at == std::string_view::npos) return false;
  size_t i = at + needle.size();
  while (i < chunk.size() && is_space(chunk[i])) ++i;
  if (i >= chunk.size() || chunk[i] != ':') return false;
  ++i;
  while (i < chunk.size() && is_space(chunk[i])) ++i;
  if (i >= chunk.size() || chunk[i] != '"') return false;
  size_t end = i + 1;
  for (; end < chunk.size() && chunk[end] != '"'; ++end)
    if (chunk[end] == '\\') ++end;  // the escaped character cannot close the string
  if (end >= chunk.size()) return false;
  head_.assign(chunk.substr(0, i));
  tail_.assign(chunk.substr(end + 1));
  known_ = true;
  return true;
}

std::string ChunkShape::with_token(std::string_view token) const {
  std::string out;
  out.reserve(head_.size() + token.size() + tail_.size());
  out.append(head_).append(token).append(tail_);
  return out;
}

std::optional<std::string> ChunkShape::text_of(std::string_view chunk, json::Parser& parser) const {
  if (!known_ || chunk.size() < head_.size() + tail_.size() + 2) return std::nullopt;
  if (!chunk.starts_with(head_) || !chunk.ends_with(tail_)) return std::nullopt;
  auto token = chunk.substr(head_.size(), chunk.size() - head_.size() - tail_.size());
  if (token.front() != '"' || token.back() != '"') return std::nullopt;
  auto inner = token.substr(1, token.size() - 2);
  for (size_t i = 0; i < inner.size();) {
    auto c = static_cast<unsigned char>(inner[i]);
    if (c == '"' || c == '\\' || c < 0x20) {
      // Escapes (or what may not be one token at all): the JSON parser decides, on the token
      // alone. It checks the UTF-8 as well.
      try {
        auto e = parser.parse(token);
        if (!e.is_string()) return std::nullopt;
        return std::string(e.get_string().value_unsafe());
      } catch (const json::DecodeError&) {
        return std::nullopt;
      }
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    auto n = utf8_sequence_length(inner, i);
    if (n == 0) return std::nullopt;  // the full parse repairs it
    i += n;
  }
  return std::string(inner);
}

}  // namespace llmx
