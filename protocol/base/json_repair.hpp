// Valid JSON that simdjson's DOM cannot hold, rewritten so that it can. RFC 8259 allows numbers
// of any size and `\uXXXX` escapes of lone surrogates; simdjson refuses both, which would turn a
// valid request into a parse error without an id. The rewrite keeps the meaning as closely as a
// DOM of doubles and UTF-8 can:
//  * an integer beyond 64 bits becomes a float of the same digits (`…0` -> `…0.0`);
//  * a number beyond a double's range becomes a string of its text (a typed decoder then names
//    the field: "expected a number");
//  * an escaped lone surrogate (`\uD800`, or a low one without its high half) becomes U+FFFD.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llmx::json {

struct Repaired {
  std::string text;
  // The exact token of the top-level object's "id" member when it was rewritten, so a JSON-RPC
  // reply can echo the id the client sent.
  std::optional<std::string> top_level_id;
};

// Whether a number token is an integer (no fraction, no exponent): only those are JSON-RPC ids.
bool is_integer_token(std::string_view token);

// nullopt when `text` holds nothing to rewrite (it is malformed for another reason) or is not
// even lexically JSON.
std::optional<Repaired> repair_unrepresentable(std::string_view text);

}  // namespace llmx::json
