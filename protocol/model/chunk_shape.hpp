// The shape of a stream chunk around its one text value. A provider's chunks of one answer
// usually differ only in that text: the same id, created, model, choice and keys. Parsing each
// whole was half of the server's work per streamed delta; a known shape lets a chunk that
// matches it byte for byte outside the text skip the parse and decode just the string.
//
// The shape itself proves nothing: its owner (ChatStreamParser) learns a candidate from a parsed
// chunk and keeps it only after two probe chunks of that shape, with different texts, parse to
// exactly those texts. A chunk is then read as "head + string token + tail", and the JSON
// grammar reads a string token the same way whatever its content, so the same holds for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/base/json_reader.hpp"

namespace llmx {

class ChunkShape {
 public:
  // Takes the candidate around the string value of the first `"key":` in `chunk` (whitespace
  // allowed around the colon). False, and nothing kept, when there is no such string.
  bool learn(std::string_view chunk, std::string_view key);
  void forget() { known_ = false; }
  bool known() const { return known_; }

  // The chunk this shape makes with `token` (a JSON string token, quotes included) as its text.
  std::string with_token(std::string_view token) const;

  // For a chunk of this shape: the text, decoded. nullopt when the chunk is not of this shape,
  // when the middle is not one string token, or when it holds invalid UTF-8 (the full parse
  // repairs that). `parser` decodes tokens with escapes.
  std::optional<std::string> text_of(std::string_view chunk, json::Parser& parser) const;

 private:
  std::string head_, tail_;
  bool known_ = false;
};

}  // namespace llmx
